// An item's size as DynamoDB bills it (Item sizes and formats, DynamoDB Developer Guide): every attribute
// name's UTF-8 bytes plus its value's. Strings: their UTF-8 bytes; numbers: about 1 byte per 2 significant
// digits, plus 1; booleans and null: 1 byte; lists and maps: 3 bytes, plus 1 per element, plus the elements
// (and a map's names); sets: their elements. A write consumes 1 unit per started KB of it (2 in a transaction).
const utf8 = (text: string) => Buffer.byteLength(text, 'utf8');

function numberSize(value: number | bigint): number {
  const digits = String(value).replace(/^-/, '').replace(/e.*$/i, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return Math.ceil(Math.max(1, digits.length) / 2) + 1;
}

function valueSize(value: unknown): number {
  if (value === null || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return utf8(value);
  if (typeof value === 'number' || typeof value === 'bigint') return numberSize(value);
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) return [...value].reduce((sum: number, element: unknown) => sum + valueSize(element), 0);
  if (Array.isArray(value)) return 3 + value.reduce((sum: number, element: unknown) => sum + 1 + valueSize(element), 0);
  if (typeof value === 'object') return 3 + itemSize(value as Record<string, unknown>) + Object.values(value).filter((element) => element !== undefined).length;
  return 0;
}

/** Bytes DynamoDB counts for an item (undefined attributes are not stored). */
export function itemSize(item: Record<string, unknown>): number {
  let size = 0;
  for (const [name, value] of Object.entries(item)) {
    if (value === undefined) continue;
    size += utf8(name) + valueSize(value);
  }
  return size;
}

/** Write units of a plain put of an item of `bytes` (1 per started KB). */
export const writeUnitsOf = (bytes: number): number => Math.max(1, Math.ceil(bytes / 1024));
