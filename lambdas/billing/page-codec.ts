// How a page's records are stored: one binary attribute, the JSON of its entries (each record's stored
// attributes with its claim) compressed with raw DEFLATE. A page's records repeat the same field names and
// many of the same values, so sixteen records of about 1.2 KB of JSON each come to about 1.5 KB (two write
// units for the whole page, where a list of maps took one per record), and one record to about 620 bytes;
// and a string of bytes costs the SDK, DynamoDB and the stream next to nothing to carry, where nested maps
// cost the SDK alone about 45 µs per record to marshal and serialize. Pages written before this (a `records`
// list of maps, amounts as DynamoDB numbers) are still read.
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { nanosFromStore, nanosToStore } from '../platform/money.js';
import { infrastructureToItem, recordFromAttributes, type GenerationRecord } from './generation-record.js';
import type { Claim, PageEntry } from './pages.js';

/**
 * Fastest compression. A page of one record (Lambda's, and the write-unit estimate) compresses as well in a
 * 1 KB window, which is quicker to set up; many records need a window that reaches back to the names of
 * the records before: 8 KB (several records of about 1.2 KB) with a smaller hash table compresses a page of
 * sixteen as small as zlib's default 32 KB window does (813 bytes against 809), in about 70 % of the time,
 * and its 64 KB of state, unlike the default's 256 KB, is taken from the allocator's free memory instead of
 * fresh pages for each page written.
 */
const ONE_RECORD = { level: 1, windowBits: 10, memLevel: 4 };
const MANY_RECORDS = { level: 1, windowBits: 13, memLevel: 6 };

/** JSON numbers are exact up to 2^53: larger amounts go as decimal text. */
function jsonAmount(nanos: bigint): number | string {
  const stored = nanosToStore(nanos);
  return typeof stored === 'bigint' ? stored.toString() : stored;
}

/** An amount from a page's JSON: a safe integer, or the decimal text of a larger one. */
function amountFromJson(value: unknown): bigint {
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return BigInt(value);
  return nanosFromStore(value);
}

function claimToItem(claim: Claim): Record<string, unknown> {
  return Object.assign({}, claim, { amount: jsonAmount(claim.amount) });
}

function claimFromItem(item: unknown, readAmount: (value: unknown) => bigint): Claim {
  const claim = item as Record<string, unknown>;
  const amount = readAmount(claim.amount);
  if (claim.kind === 'lease') return { kind: 'lease', leaseId: String(claim.leaseId), amount };
  if (claim.kind === 'hold') return { kind: 'hold', amount };
  if (claim.kind === 'none' && amount === 0n) return { kind: 'none', amount };
  throw new Error(`unknown claim kind ${String(claim.kind)}`);
}

/**
 * The JSON a page stores for a record, but for its infrastructure cost (settlement sizes the record before it
 * knows that cost, which depends on the size) and its claim. Settlement makes it once and hands it to the
 * page with the record (PageEntry.json); the entry's JSON is then this with the two appended.
 */
export function recordJson(record: GenerationRecord): string {
  // Every field named, in the order settlement builds a record: one object of one shape, where copying the
  // record with Object.assign grew a fresh object field by field (on the bench machine 10.3 µs a record
  // against 3.5 µs, and about 2.9 KB of garbage against a few hundred bytes). The type lists every field of
  // GenerationRecord, so a field added there must be added here.
  const cost = record.cost;
  const stored: { [Field in Exclude<keyof GenerationRecord, 'infra'>]-?: unknown } = {
    id: record.id,
    org_id: record.org_id,
    workspace_id: record.workspace_id,
    key_hash: record.key_hash,
    model: record.model,
    provider: record.provider,
    upstream_model: record.upstream_model,
    provider_id: record.provider_id,
    api: record.api,
    streamed: record.streamed,
    status: record.status,
    finish_reason: record.finish_reason,
    native_finish_reason: record.native_finish_reason,
    usage: record.usage,
    cost: {
      prompt: jsonAmount(cost.prompt),
      completion: jsonAmount(cost.completion),
      cache_read: jsonAmount(cost.cache_read),
      cache_write: jsonAmount(cost.cache_write),
      reasoning: jsonAmount(cost.reasoning),
      request: jsonAmount(cost.request),
      total: jsonAmount(cost.total),
    },
    is_byok: record.is_byok,
    service_tier: record.service_tier,
    attempts: record.attempts,
    created_at: record.created_at,
    latency_ms: record.latency_ms,
    first_token_ms: record.first_token_ms,
    generation_time_ms: record.generation_time_ms,
    session_id: record.session_id,
    user_hash: record.user_hash,
    error: record.error,
    reserved: jsonAmount(record.reserved),
    usage_estimated: record.usage_estimated,
    provider_responses: record.provider_responses,
    // Absent (left out of the JSON) unless the request counted on meters of its own.
    spend_meters: record.spend_meters,
  };
  return JSON.stringify(stored);
}

/** What an entry's JSON adds for the record's infrastructure cost, if it has one. */
function entryInfra(record: GenerationRecord): string {
  return record.infra ? `,"infra":${JSON.stringify(infrastructureToItem(record.infra, jsonAmount))}` : '';
}

/** `,"claim":`: what an entry's JSON adds before its claim (the claim's closing brace takes the place of the record's). */
const CLAIM_PREFIX_BYTES = ',"claim":'.length;

/** An entry as a page stores it (its record with its infrastructure cost and claim), as JSON text. */
export function entryJson(entry: PageEntry): string {
  if (entry.text !== undefined) return entry.text;
  const base = entry.json ?? recordJson(entry.record);
  return `${base.slice(0, -1)}${entryInfra(entry.record)},"claim":${JSON.stringify(claimToItem(entry.claim))}}`;
}

/** An entry from its JSON text (entryJson's). */
export function entryFromJson(text: string): PageEntry {
  const stored = JSON.parse(text) as unknown;
  if (stored === null || typeof stored !== 'object' || Array.isArray(stored)) throw new Error('a page entry is not a JSON object');
  return entryFromStored(stored as Record<string, unknown>, amountFromJson);
}

export function encodeEntries(entries: readonly PageEntry[]): Buffer {
  return deflateRawSync(`[${entries.map(entryJson).join(',')}]`, entries.length === 1 ? ONE_RECORD : MANY_RECORDS);
}

function entryFromStored(stored: Record<string, unknown>, readAmount: (value: unknown) => bigint): PageEntry {
  const { claim, ...record } = stored;
  return { record: recordFromAttributes(record, readAmount), claim: claimFromItem(claim, readAmount) };
}

/** A page's entries from its item: `data` as the SDK reads it (bytes) or as a Lambda stream event gives it (base64). */
export function decodeEntries(item: Record<string, unknown>): PageEntry[] {
  const { data } = item;
  if (data === undefined && Array.isArray(item.records)) return (item.records as Array<Record<string, unknown>>).map((stored) => entryFromStored(stored, nanosFromStore));
  let bytes: Uint8Array;
  if (typeof data === 'string') bytes = Buffer.from(data, 'base64');
  else if (data instanceof Uint8Array) bytes = data;
  else throw new Error('page has neither data nor records');
  const stored = JSON.parse(inflateRawSync(bytes).toString('utf8')) as unknown;
  if (!Array.isArray(stored)) throw new Error('page data is not a list of records');
  return (stored as Array<Record<string, unknown>>).map((entry) => entryFromStored(entry, amountFromJson));
}

/** How often RecordSizes compresses a record to measure it; in between it scales the JSON size by the last ratio. */
export const MEASURE_EVERY = 32;

/**
 * Bytes a page holding only this record stores for it (as on Lambda, where a page usually holds one): its
 * JSON while that alone stays within `compressAbove` bytes; beyond, its compressed size. Compressing a
 * record only to measure it costs about 15 µs, as much as the rest of its settlement: one record in
 * MEASURE_EVERY is measured, and the others are estimated at the ratio the last measurement found (records
 * of one process differ in ids, counts and amounts, not in shape, so the ratio hardly moves).
 */
export class RecordSizes {
  private ratio: number | undefined;
  private sinceMeasured = 0;

  storedBytes(record: GenerationRecord, compressAbove: number, base = recordJson(record)): number {
    const claim: Claim = { kind: 'hold', amount: record.reserved };
    // The entry's JSON is the record's with its claim (and infrastructure cost, if any) appended: counted
    // without building it, unless it is compressed.
    const infra = entryInfra(record);
    const bytes = Buffer.byteLength(base, 'utf8') + Buffer.byteLength(infra, 'utf8') + CLAIM_PREFIX_BYTES + Buffer.byteLength(JSON.stringify(claimToItem(claim)), 'utf8') + 2;
    if (bytes <= compressAbove) return bytes;
    this.sinceMeasured += 1;
    if (this.ratio === undefined || this.sinceMeasured >= MEASURE_EVERY) {
      const measured = deflateRawSync(`[${entryJson({ record, claim, json: base })}]`, ONE_RECORD).byteLength;
      this.ratio = measured / bytes;
      this.sinceMeasured = 0;
      return measured;
    }
    return Math.ceil(bytes * this.ratio);
  }
}
