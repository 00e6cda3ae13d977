// SHA-256 of a string (UTF-8) as hex: Node's one-shot crypto.hash (Node 20.12+, 22) where there is one,
// about 0.2 µs for a key-sized input against 0.6 µs through createHash's Hash object.
import crypto from 'node:crypto';

// Node 20.0–20.11 (the engines range) has none.
const oneShot = crypto.hash as typeof crypto.hash | undefined;

export const sha256Hex: (text: string) => string = typeof oneShot === 'function'
  ? (text) => oneShot('sha256', text, 'hex')
  : (text) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');
