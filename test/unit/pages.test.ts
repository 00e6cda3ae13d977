// Generation ids that name their page block, and the page writer: records collected into pages per block,
// written after a short delay or when a page is full, retried while the store fails, never rejected.
import { describe, expect, it } from '@jest/globals';
import { BLOCK_SIZE, blockOf, GenerationIds, PageWriter, type Page, type PageEntry } from '../../lambdas/billing/pages.js';
import type { GenerationRecord } from '../../lambdas/billing/generation-record.js';
import { Logger } from '../../lambdas/platform/logger.js';
import { generationRecord } from '../support/records.js';

function entry(id: string, overrides: Partial<GenerationRecord> = {}): PageEntry {
  const record = generationRecord(id, { key_hash: 'k', cost: { prompt: 1n, completion: 2n, cache_read: 0n, cache_write: 0n, reasoning: 0n, request: 0n, total: 3n }, ...overrides });
  return { record, claim: { kind: 'hold', amount: 10n } };
}

describe('generation ids', () => {
  it('hand out BLOCK_SIZE ids per block, each naming its block; legacy ids name none', () => {
    const ids = new GenerationIds();
    const handed = Array.from({ length: BLOCK_SIZE + 1 }, () => ids.next(Date.parse('2026-11-24T10:00:00Z')));
    expect(handed[0]).toMatch(/^gen-1795514400-[0-9A-Za-z]{12}00$/);
    const blocks = handed.map((id) => blockOf(id));
    expect(new Set(blocks.slice(0, BLOCK_SIZE)).size).toBe(1);
    expect(blocks[BLOCK_SIZE]).not.toBe(blocks[0]);
    expect(handed[BLOCK_SIZE - 1]!.slice(-2)).toBe((BLOCK_SIZE - 1).toString(36));
    expect(new Set(handed).size).toBe(handed.length);
    // Before pages: 20 base64url characters after the timestamp.
    expect(blockOf('gen-1763978400-AbCdEfGhIjKlMnOpQrSt')).toBeUndefined();
    expect(blockOf('gen-1763978400-AbC-EfGhIjKl00')).toBeUndefined();
    // A legacy id whose random part holds a '-' followed by what looks like a block is not one.
    expect(blockOf('gen-1700000000-dtiE_-LtKDTHorBHhc5z')).toBeUndefined();
    expect(blockOf('not-a-generation')).toBeUndefined();
  });
});

function writer(options: { fail?: number; pageRecords?: number; retryForMs?: number } = {}) {
  const pages: Page[] = [];
  const logs: string[] = [];
  let failures = options.fail ?? 0;
  const store = {
    put: async (page: Page) => {
      if (failures > 0) {
        failures -= 1;
        throw new Error('store unavailable');
      }
      pages.push(page);
      return { writeUnits: page.entries.length * 2 };
    },
  };
  const pageWriter = new PageWriter({
    store, log: new Logger((line) => { logs.push(line); }), sleep: async () => {},
    flushDelayMs: 1, ...(options.pageRecords ? { pageRecords: options.pageRecords } : {}), ...(options.retryForMs !== undefined ? { retryForMs: options.retryForMs } : {}),
  });
  return { pageWriter, pages, logs };
}

describe('PageWriter', () => {
  it('collects records finished together into one page per block, numbered per block', async () => {
    const { pageWriter, pages } = writer();
    const ids = new GenerationIds();
    const other = new GenerationIds();
    const a = [ids.next(0), ids.next(0), other.next(0)];
    const stored = await Promise.all(a.map((id) => pageWriter.add(entry(id))));
    expect(stored).toEqual([{ stored: true, writeUnits: 2 }, { stored: true, writeUnits: 2 }, { stored: true, writeUnits: 2 }]);
    expect(pages.map((page) => [page.block, page.seq, page.entries.map((e) => e.record.id)])).toEqual([
      [blockOf(a[0]!), 1, [a[0], a[1]]],
      [blockOf(a[2]!), 1, [a[2]]],
    ]);
    await pageWriter.add(entry(ids.next(0)));
    expect(pages.at(-1)).toMatchObject({ block: blockOf(a[0]!), seq: 2 });
  });

  it('writes a full page at once, and flush() writes what waits', async () => {
    const { pageWriter, pages } = writer({ pageRecords: 2 });
    const ids = new GenerationIds();
    const first = pageWriter.add(entry(ids.next(0)));
    expect(pages).toHaveLength(0);
    const second = pageWriter.add(entry(ids.next(0)));
    await Promise.all([first, second]);
    expect(pages.map((page) => page.entries.length)).toEqual([2]);
    const third = pageWriter.add(entry(ids.next(0)));
    await pageWriter.flush();
    expect(pages.map((page) => page.entries.length)).toEqual([2, 1]);
    await expect(third).resolves.toEqual({ stored: true, writeUnits: 2 });
  });

  it('retries a page while the store fails, then logs it for reconciliation without rejecting', async () => {
    const retried = writer({ fail: 3 });
    const id = new GenerationIds().next(0);
    await expect(retried.pageWriter.add(entry(id))).resolves.toEqual({ stored: true, writeUnits: 2 });
    expect(retried.pages).toHaveLength(1);
    expect(retried.logs.filter((line) => line.includes('generation page write failed'))).toHaveLength(3);

    const lost = writer({ fail: Number.POSITIVE_INFINITY, retryForMs: 0 });
    await expect(lost.pageWriter.add(entry(id))).resolves.toEqual({ stored: false, writeUnits: 0 });
    const error = JSON.parse(lost.logs.find((line) => line.includes('reconcile by hand'))!) as { records: Array<Record<string, unknown>> };
    expect(error.records).toEqual([{ generation_id: id, org_id: 'org1', key_hash: 'k', workspace_id: 'ws1', cost: '3', is_byok: false, claim: 'hold', held: '10' }]);
  });

  it('closes a page before applying it would write more than 100 items in one transaction', async () => {
    const { pageWriter, pages } = writer();
    const ids = new GenerationIds();
    // Exact holds on keys of their own workspaces: four items a record (hold, key, workspace, rollup row)
    // beside the block's marker and the shared organization, so 24 records make 98 items and a 25th 102.
    const distinct = Array.from({ length: 30 }, (_, i) => pageWriter.add(entry(ids.next(0), { key_hash: `k${i}`, workspace_id: `ws${i}` })));
    await Promise.all(distinct);
    expect(pages.map((page) => page.entries.length)).toEqual([24, 6]);
    // Records of one key share all their items: a page holds up to a block's worth.
    const shared = new GenerationIds();
    await Promise.all(Array.from({ length: BLOCK_SIZE }, () => ({ ...entry(shared.next(0)), claim: { kind: 'lease' as const, leaseId: 'l1', amount: 3n } }))
      .map((one) => pageWriter.add(one)));
    expect(pages.at(-1)!.entries).toHaveLength(BLOCK_SIZE);
  });

  it('refuses a record whose id names no block', () => {
    const { pageWriter } = writer();
    expect(() => pageWriter.add(entry('gen-1763978400-AbCdEfGhIjKlMnOpQrSt'))).toThrow('names no page block');
  });
});
