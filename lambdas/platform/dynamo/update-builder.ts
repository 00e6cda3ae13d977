// Builds an UpdateItem's expressions (SET, ADD, REMOVE and the condition) with their placeholders, so that
// no repository writes `#f = :f` loops or joins clauses by hand. Placeholders are `#<name>` / `:<name>`
// (characters DynamoDB rejects in placeholders are dropped), which keeps expressions readable in logs.

export interface UpdateExpressions {
  UpdateExpression: string;
  ConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
}

// The reservation and settlement build a few dozen clauses per request over the same attribute names:
// each name's placeholder is worked out once per process.
const PLACEHOLDERS = new Map<string, string>();
const MAX_REMEMBERED = 1000;

function placeholder(name: string): string {
  let found = PLACEHOLDERS.get(name);
  if (found === undefined) {
    found = name.replace(/[^A-Za-z0-9_]/g, '');
    if (PLACEHOLDERS.size < MAX_REMEMBERED) PLACEHOLDERS.set(name, found);
  }
  return found;
}

export class UpdateBuilder {
  private names: Record<string, string> | undefined;
  private values: Record<string, unknown> | undefined;
  private readonly sets: string[] = [];
  private readonly adds: string[] = [];
  private readonly removes: string[] = [];
  private readonly conditions: string[] = [];

  /** The `#` placeholder of an attribute name (`#<as>`, or derived from the name). */
  name(attribute: string, as = placeholder(attribute)): string {
    const name = `#${as}`;
    (this.names ??= {})[name] = attribute;
    return name;
  }

  /** The `:` placeholder of a value. */
  value(as: string, value: unknown): string {
    const name = `:${as}`;
    (this.values ??= {})[name] = value;
    return name;
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
    let expression = this.adds.length ? `ADD ${this.adds.join(', ')}` : '';
    if (this.sets.length) expression += `${expression ? ' ' : ''}SET ${this.sets.join(', ')}`;
    if (this.removes.length) expression += `${expression ? ' ' : ''}REMOVE ${this.removes.join(', ')}`;
    const built: UpdateExpressions = { UpdateExpression: expression };
    if (this.conditions.length) built.ConditionExpression = this.conditions.join(' AND ');
    if (this.names) built.ExpressionAttributeNames = this.names;
    if (this.values) built.ExpressionAttributeValues = this.values;
    return built;
  }
}
