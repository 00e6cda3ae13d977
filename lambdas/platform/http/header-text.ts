// Text that ends up in an HTTP header of an upstream request (a provider key, a destination's header or
// credentials): checked when it is stored, since node:http refuses to send a control character or one
// above U+00FF (ERR_INVALID_CHAR), and every later use would fail instead (a 502 per request through a
// customer's key, a delivery retried as if the failure were passing).
import * as z from 'zod';

/** A key or token: visible ASCII, no spaces. */
const KEY_TEXT = /^[\x21-\x7e]+$/;
/** A header value: visible ASCII, spaces and tabs, and Latin-1 (obs-text); no line breaks or other controls. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** A credential sent in a header, between `min` and `max` characters. */
export function keyText(min: number, max: number) {
  return z.string().min(min, min === 1 ? 'must not be empty' : undefined).max(max)
    .regex(KEY_TEXT, 'must be printable ASCII without spaces or line breaks: it is sent in an HTTP header');
}

/** A header value of at most `max` characters. */
export function headerValue(max: number) {
  return z.string().max(max).regex(HEADER_VALUE, 'header values must not contain line breaks, control characters or characters above U+00FF');
}
