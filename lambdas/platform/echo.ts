// How much of the caller's input a message may repeat: used by domain errors and the HTTP error envelope alike.

/** Longest piece of input (a field name, a value, a path segment) an error message repeats. */
export const MAX_ECHO_CHARS = 64;

/** A piece of input as an error message may repeat it: at most `max` characters, then an ellipsis. */
export function echo(value: unknown, max = MAX_ECHO_CHARS): string {
  const text = String(value);
  if (text.length <= max) return text;
  // Never split a surrogate pair.
  const end = /[\uD800-\uDBFF]/.test(text[max - 1]!) ? max - 1 : max;
  return `${text.slice(0, end)}…`;
}
