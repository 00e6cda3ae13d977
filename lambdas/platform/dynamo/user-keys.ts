// Free-form JSON that users store (a batch's metadata, a preset's JSON schema, a destination's headers) may
// have a key named `constructor`. The document client's marshaller tells a map from other types by reading
// `value.constructor.name`: such an object was refused ("Unsupported type passed", a 500), and one whose
// `constructor` holds `{ "name": "String" }` would be stored as the text "[object Object]". Before the
// marshaller sees an input, every plain object with an own `constructor` key becomes a Map of the same
// entries, which it stores as the same DynamoDB map; reading it back gives the plain object again.
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

function isPlain(value: object): boolean {
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/** `value` with every plain object that has an own `constructor` key as a Map; the same value when it has none. */
export function withUserKeysAsMaps(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i += 1) {
      const item = withUserKeysAsMaps(value[i]);
      if (item !== value[i]) (copy ??= value.slice())[i] = item;
    }
    return copy ?? value;
  }
  if (!isPlain(value)) return value;
  const record = value as Record<string, unknown>;
  const own = Object.prototype.hasOwnProperty.call(record, 'constructor');
  let copy: Record<string, unknown> | undefined;
  for (const key of Object.keys(record)) {
    const item = withUserKeysAsMaps(record[key]);
    if (item !== record[key]) (copy ??= Object.assign({}, record))[key] = item;
  }
  if (own) return new Map(Object.entries(copy ?? record));
  return copy ?? value;
}

/** Adds the conversion to a client's commands, before the document client marshals their input. */
export function storeUserKeysAsMaps<C extends DynamoDBClient>(client: C): C {
  client.middlewareStack.add((next) => (args) => {
    args.input = withUserKeysAsMaps(args.input) as typeof args.input;
    return next(args);
  }, { step: 'initialize', name: 'userKeysAsMaps', priority: 'high' });
  return client;
}
