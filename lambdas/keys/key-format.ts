// API key text: a recognisable prefix, 256 random bits and a checksum, so malformed or mistyped keys
// are refused before any storage lookup. Only the SHA-256 hash of the text is ever stored.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { sha256Hex } from '../platform/sha256.js';

export const KEY_PREFIX = 'sk-gw-v1-';
const BODY_HEX = 64;
const CHECKSUM_HEX = 8;
const WELL_FORMED = new RegExp(`^${KEY_PREFIX}[0-9a-f]{${BODY_HEX}}[0-9a-f]{${CHECKSUM_HEX}}$`);

function checksum(body: string): string {
  return sha256Hex(`${KEY_PREFIX}${body}`).slice(0, CHECKSUM_HEX);
}

export function generateKeyText(): string {
  const body = randomBytes(BODY_HEX / 2).toString('hex');
  return `${KEY_PREFIX}${body}${checksum(body)}`;
}

/** True when the text has the prefix, the shape and a matching checksum. */
export function isWellFormedKey(text: string): boolean {
  return hasKeyShape(text) && hasKeyChecksum(text);
}

/** True when the text has the prefix and the shape (the checksum is not looked at). */
export function hasKeyShape(text: string): boolean {
  return text.length === KEY_PREFIX.length + BODY_HEX + CHECKSUM_HEX && WELL_FORMED.test(text);
}

/** True when a text of the key's shape ends with its body's checksum. */
export function hasKeyChecksum(text: string): boolean {
  const body = text.slice(KEY_PREFIX.length, KEY_PREFIX.length + BODY_HEX);
  const given = Buffer.from(text.slice(-CHECKSUM_HEX));
  return timingSafeEqual(given, Buffer.from(checksum(body)));
}

export function hashKey(text: string): string {
  return sha256Hex(text);
}

/** Constant-time equality of two hex hashes. */
export function hashesEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Masked key text for listings: prefix, three characters of the body, the last three. */
export function labelFor(text: string): string {
  const body = text.startsWith(KEY_PREFIX) ? text.slice(KEY_PREFIX.length) : text;
  const prefix = text.startsWith(KEY_PREFIX) ? KEY_PREFIX : '';
  if (body.length < 8) return `${prefix}...`;
  return `${prefix}${body.slice(0, 3)}...${body.slice(-3)}`;
}
