// Builds an UpdateItem's expressions (SET, ADD, REMOVE and the condition) with their placeholders, so that
// no repository writes `#f = :f` loops or joins clauses by hand. Placeholders are `#<name>` / `:<name>`
// (characters DynamoDB rejects in placeholders are dropped), which keeps expressions readable in logs.

export interface UpdateExpressions {
  UpdateExpression: string;
  ConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
}

const placeholder = (name: string) => name.replace(/[^A-Za-z0-9_]/g, '');

export class UpdateBuilder {
  private readonly names: Record<string, string> = {};
  private readonly values: Record<string, unknown> = {};
  private readonly sets: string[] = [];
  private readonly adds: string[] = [];
  private readonly removes: string[] = [];
  private readonly conditions: string[] = [];

  /** The `#` placeholder of an attribute name (`#<as>`, or derived from the name). */
  name(attribute: string, as = placeholder(attribute)): string {
    this.names[`#${as}`] = attribute;
    return `#${as}`;
  }

  /** The `:` placeholder of a value. */
  value(as: string, value: unknown): string {
    this.values[`:${as}`] = value;
    return `:${as}`;
  }

  /** SET `attribute` = `value`; `path` prefixes the name (e.g. '#settings.' for a field of a map). */
  set(attribute: string, value: unknown, path = ''): this {
    const as = placeholder(attribute);
    this.sets.push(`${path}${this.name(attribute, as)} = ${this.value(as, value)}`);
    return this;
  }

  /** SET of every field that is not undefined, in the object's order. */
  setFields(fields: Record<string, unknown>, path = '', encode: (field: string, value: unknown) => unknown = (_field, value) => value): this {
    for (const [field, value] of Object.entries(fields)) {
      if (value !== undefined) this.set(field, encode(field, value), path);
    }
    return this;
  }

  /** A SET clause written out (e.g. with if_not_exists), its placeholders declared through name() and value(). */
  setExpression(clause: string): this {
    this.sets.push(clause);
    return this;
  }

  /** ADD `amount` to a number attribute (a missing one counts as zero). */
  add(attribute: string, amount: unknown, as = placeholder(attribute)): this {
    this.adds.push(`${this.name(attribute, as)} ${this.value(as, amount)}`);
    return this;
  }

  /** An ADD clause written out. */
  addExpression(clause: string): this {
    this.adds.push(clause);
    return this;
  }

  /** A REMOVE path written out. */
  removeExpression(path: string): this {
    this.removes.push(path);
    return this;
  }

  /** A condition, ANDed with the others. */
  condition(expression: string): this {
    this.conditions.push(expression);
    return this;
  }

  get hasUpdates(): boolean {
    return this.sets.length + this.adds.length + this.removes.length > 0;
  }

  /** The expressions, for an UpdateCommand or a transaction's Update (empty maps are left out). */
  build(): UpdateExpressions {
    const clauses = [
      this.adds.length ? `ADD ${this.adds.join(', ')}` : '',
      this.sets.length ? `SET ${this.sets.join(', ')}` : '',
      this.removes.length ? `REMOVE ${this.removes.join(', ')}` : '',
    ].filter(Boolean);
    return {
      UpdateExpression: clauses.join(' '),
      ...(this.conditions.length ? { ConditionExpression: this.conditions.join(' AND ') } : {}),
      ...(Object.keys(this.names).length ? { ExpressionAttributeNames: this.names } : {}),
      ...(Object.keys(this.values).length ? { ExpressionAttributeValues: this.values } : {}),
    };
  }
}
