// How a page's records are stored: compressed JSON that gives back every field and amount exactly (beyond
// 2^53 too), read from bytes (the SDK) or base64 (a Lambda stream event), and pages of the old list format.
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { describe, expect, it } from '@jest/globals';
import { decodeEntries, encodeEntries, MEASURE_EVERY, RecordSizes, recordJson } from '../../lambdas/billing/page-codec.js';
import { pageFromItem, pageToItem } from '../../lambdas/billing/page-repository.js';
import { recordToAttributes } from '../../lambdas/billing/generation-record.js';
import type { PageEntry } from '../../lambdas/billing/pages.js';
import { generationRecord } from '../support/records.js';

const huge = 2n ** 60n + 7n;
const entries: PageEntry[] = [
  {
    record: {
      ...generationRecord('gen-1795514400-ABCDEFGHIJKL00', { error: { status: 502, message: 'upstream said “no” 🚫' }, provider_responses: [{ provider: 'a', model: 'a', status: 502 }] }),
      infra: { lambda_compute: 12n, lambda_request: 200n, lambda_streaming: 0n, dynamodb: 1250n, kms: 0n, total: 1462n, memory_mb: 1024, duration_ms: 3 } as never,
    },
    claim: { kind: 'lease', leaseId: 'lease-1', amount: 30n },
  },
  { record: generationRecord('gen-1795514400-ABCDEFGHIJKL01', { cost: { ...generationRecord('x').cost, total: huge }, reserved: huge }), claim: { kind: 'hold', amount: huge } },
  { record: generationRecord('gen-1795514400-ABCDEFGHIJKL02', { is_byok: true, reserved: 0n }), claim: { kind: 'none', amount: 0n } },
];

describe('page codec', () => {
  it('gives back every record and claim exactly, from bytes and from base64', () => {
    const data = encodeEntries(entries);
    const expected = entries.map((entry) => ({ ...entry, record: { ...entry.record, infra: entry.record.infra ?? null } }));
    expect(decodeEntries({ data })).toEqual(expected);
    expect(decodeEntries({ data: data.toString('base64') })).toEqual(expected);
    const item = pageToItem({ block: 'ABCDEFGHIJKL', seq: 3, entries, writtenAt: 1 });
    expect(Object.keys(item).sort()).toEqual(['data', 'pk', 'sk', 'type', 'written_at']);
    expect(pageFromItem(item)).toEqual({ block: 'ABCDEFGHIJKL', seq: 3, entries: expected, writtenAt: 1 });
  });

  it('an entry handed its record\'s JSON, made before the infrastructure cost was known, stores exactly what one without it does', () => {
    const record = generationRecord('gen-1795514400-ABCDEFGHIJKL00', { cost: { ...generationRecord('x').cost, total: huge } });
    const json = recordJson(record);
    record.infra = entries[0]!.record.infra;
    const claim = { kind: 'lease', leaseId: 'lease-1', amount: 30n } as const;
    const data = encodeEntries([{ record, claim, json }]);
    expect(data).toEqual(encodeEntries([{ record, claim }]));
    expect(decodeEntries({ data })).toEqual([{ record, claim }]);
  });

  it('stores sixteen similar records in well under one write unit', () => {
    const many = Array.from({ length: 16 }, (_, i): PageEntry => ({
      record: generationRecord(`gen-1795514400-ABCDEFGHIJKL${i.toString(36).padStart(2, '0')}`, { latency_ms: 10 + i }),
      claim: { kind: 'lease', leaseId: 'lease-1', amount: BigInt(i) },
    }));
    const json = JSON.stringify(many.map((entry) => recordToAttributes(entry.record)), (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
    expect(json.length).toBeGreaterThan(8 * 1024);
    expect(encodeEntries(many).byteLength).toBeLessThan(1024);
  });

  it('gives back a page of 500 records exactly, at a tenth of its JSON or less (the window reaches back a few records)', () => {
    const many = Array.from({ length: 500 }, (_, i): PageEntry => ({
      record: generationRecord(`gen-1795514400-ABCDEFGH${i.toString(36).padStart(4, '0')}`, { latency_ms: 10 + (i % 17), first_token_ms: 40 + (i % 29) }),
      claim: { kind: 'lease', leaseId: `lease-${i % 3}`, amount: BigInt(i * 1000) },
    }));
    const data = encodeEntries(many);
    const expected = many.map((entry) => ({ ...entry, record: { ...entry.record, infra: null } }));
    expect(decodeEntries({ data })).toEqual(expected);
    const json = `[${many.map((entry) => recordJson(entry.record)).join(',')}]`;
    expect(data.byteLength).toBeLessThan(json.length / 10);
  });

  it('reads pages written as a list of maps', () => {
    const records = entries.map((entry) => ({ ...recordToAttributes(entry.record), claim: { ...entry.claim, amount: entry.claim.amount } }));
    expect(decodeEntries({ records }).map((entry) => entry.record.id)).toEqual(entries.map((entry) => entry.record.id));
    expect(decodeEntries({ records })[1]!.claim).toEqual({ kind: 'hold', amount: huge });
  });

  it('refuses an item without records, and data that is not a list', () => {
    expect(() => decodeEntries({})).toThrow('neither data nor records');
    expect(() => decodeEntries({ data: deflateRawSync('{"id":"x"}') })).toThrow('not a list of records');
    expect(() => decodeEntries({ data: Buffer.from('not deflated') })).toThrow();
  });

  it('counts a record\'s stored bytes: its JSON while small; beyond, measured compressed, then estimated at the measured ratio', () => {
    const record = generationRecord('gen-1795514400-ABCDEFGHIJKL00');
    const json = new RecordSizes().storedBytes(record, 10_000);
    // Uncompressed: the bytes of the page's JSON (a list of the one entry), as encodeEntries writes it.
    const entry = `[${JSON.stringify({ ...recordToAttributes(record, (nanos) => Number(nanos)), claim: { kind: 'hold', amount: Number(record.reserved) } })}]`;
    expect(json).toBe(Buffer.byteLength(entry));
    expect(json).toBe(inflateRawSync(encodeEntries([{ record, claim: { kind: 'hold', amount: record.reserved } }])).byteLength);
    const sizes = new RecordSizes();
    const measured = sizes.storedBytes(record, 100);
    expect(measured).toBe(deflateRawSync(`[${JSON.stringify({ ...recordToAttributes(record), claim: { kind: 'hold', amount: 100 } })}]`, { windowBits: 10, memLevel: 4, level: 1 }).byteLength);
    expect(measured).toBeLessThan(json);
    // A larger record of the same shape, between measurements: its JSON size at the measured ratio.
    const larger = generationRecord('gen-1795514400-ABCDEFGHIJKL01', { provider_id: 'x'.repeat(200) });
    const largerJson = new RecordSizes().storedBytes(larger, 10_000);
    expect(sizes.storedBytes(larger, 100)).toBe(Math.ceil(largerJson * (measured / json)));
    // Every MEASURE_EVERY-th record is measured again.
    for (let i = 2; i < MEASURE_EVERY; i += 1) sizes.storedBytes(record, 100);
    const remeasured = sizes.storedBytes(larger, 100);
    expect(remeasured).toBe(new RecordSizes().storedBytes(larger, 100));
  });
});
