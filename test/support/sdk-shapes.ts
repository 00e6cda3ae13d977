// What @openrouter/sdk silently failed to parse. Its discriminated unions (stream events, output items,
// content parts) do not throw on a reply that misses a required field: they fall back to an object
// `{ raw, type: 'UNKNOWN', isUnknown: true }`. A reply "parses" only if no such fallback is left in it.
export function unknownPaths(value: unknown, path = '$', seen = new Set<unknown>()): string[] {
  if (typeof value !== 'object' || value === null || seen.has(value)) return [];
  seen.add(value);
  if ((value as { isUnknown?: unknown }).isUnknown === true) {
    return [`${path}: ${JSON.stringify((value as { raw?: unknown }).raw).slice(0, 300)}`];
  }
  if (Array.isArray(value)) return value.flatMap((item, index) => unknownPaths(item, `${path}[${index}]`, seen));
  // Class instances other than plain data (streams, Requests, Responses) are not parsed reply data.
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return [];
  return Object.entries(value).flatMap(([key, item]) => unknownPaths(item, `${path}.${key}`, seen));
}

/** Every event of an SDK stream, in order. */
export async function drain<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const events: T[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** An SDK reply that is a stream (the SDK types a `stream: true` reply as stream-or-object). */
export function streamOf<T>(reply: T): Extract<T, AsyncIterable<unknown>> {
  if (typeof reply !== 'object' || reply === null || !(Symbol.asyncIterator in reply)) throw new Error(`expected a stream, got ${JSON.stringify(reply).slice(0, 300)}`);
  return reply as Extract<T, AsyncIterable<unknown>>;
}

/** An SDK reply that is a JSON object, not a stream. */
export function objectOf<T>(reply: T): Exclude<T, AsyncIterable<unknown>> {
  if (typeof reply !== 'object' || reply === null || Symbol.asyncIterator in reply) throw new Error('expected a JSON reply, got a stream');
  return reply as Exclude<T, AsyncIterable<unknown>>;
}
