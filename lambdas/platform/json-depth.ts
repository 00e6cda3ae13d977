// How deeply JSON text nests, before it is parsed. JSON.parse takes any depth, but the code that walks a
// parsed value (token estimates, the SDK's marshalling, JSON.stringify of a record's copy) recurses, and a
// body of 5,000 nested arrays ran it out of stack: a request is refused at MAX_JSON_DEPTH instead. One pass
// over the bytes, skipping strings: structural characters and quotes are ASCII, never part of a multi-byte
// UTF-8 sequence, so the bytes are scanned as they are.

/** Nesting of objects and arrays a request body (or a batch line) may have: far beyond any real schema or tool input. */
export const MAX_JSON_DEPTH = 128;

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_BRACE = 123;
const OPEN_BRACKET = 91;
const CLOSE_BRACE = 125;
const CLOSE_BRACKET = 93;

/** Whether `json` opens more than `max` objects and arrays inside one another (valid JSON or not). */
export function nestsDeeperThan(json: Uint8Array | string, max = MAX_JSON_DEPTH): boolean {
  // Each level takes at least one character: text this short cannot nest deeper.
  if (json.length <= max) return false;
  // Text (a batch line, off the request path) is scanned as its bytes: one loop, and no call per byte.
  const bytes = typeof json === 'string' ? Buffer.from(json, 'utf8') : json;
  // Nor can text with no more opening brackets than `max` (most bodies have a few dozen): counted by
  // indexOf, a native search, instead of a step of the loop below per byte.
  if (opensAtMost(bytes, max)) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i += 1) {
    const c = bytes[i]!;
    if (inString) {
      if (c === BACKSLASH) i += 1;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth += 1;
      if (depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth -= 1;
    }
  }
  return false;
}

/** Whether `bytes` holds at most `max` of `{` and `[` together (in strings or not). */
function opensAtMost(bytes: Uint8Array, max: number): boolean {
  let count = 0;
  for (let at = bytes.indexOf(OPEN_BRACE); at !== -1; at = bytes.indexOf(OPEN_BRACE, at + 1)) if (++count > max) return false;
  for (let at = bytes.indexOf(OPEN_BRACKET); at !== -1; at = bytes.indexOf(OPEN_BRACKET, at + 1)) if (++count > max) return false;
  return true;
}
