// npm start's journal of records between settlement and their page (bin/local/page-journal.ts): a record is in
// a file from the moment it is added until its page is stored, a file whose records are all stored is
// deleted, and the next start stores exactly the journaled records no stored page holds, each after its
// block's last page.
import { appendFileSync, chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { LocalPageJournal, pageJournalDir, storeJournaledRecords, type JournalStore } from '../../bin/local/page-journal.js';
import type { Page, PageEntry } from '../../lambdas/billing/pages.js';
import { entryJson } from '../../lambdas/billing/page-codec.js';
import { generationRecord } from '../support/records.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'page-journal-'));
  dirs.push(dir);
  return dir;
}

const entry = (id: string, amount = 7n): PageEntry => ({ record: generationRecord(id), claim: { kind: 'lease', leaseId: 'lease-1', amount } });
const A0 = 'gen-1795514400-AAAAAAAAAAAA00';
const A1 = 'gen-1795514400-AAAAAAAAAAAA01';
const A2 = 'gen-1795514400-AAAAAAAAAAAA02';
const B0 = 'gen-1795514400-BBBBBBBBBBBB00';

/** A page store that holds what it is given; `pages` is what was there before. */
function fakeStore(pages: Page[]): JournalStore & { put: (page: Page) => Promise<void>; pages: Page[] } {
  return {
    pages,
    async blockContents(block) {
      const ofBlock = pages.filter((page) => page.block === block);
      return { maxSeq: Math.max(0, ...ofBlock.map((page) => page.seq)), ids: new Set(ofBlock.flatMap((page) => page.entries.map((e) => e.record.id))) };
    },
    async put(page) {
      pages.push(page);
    },
  };
}

describe('page journal', () => {
  it('keeps a record from its add until its page is stored, then deletes the closed file', () => {
    const dir = tempDir();
    const journal = new LocalPageJournal(dir);
    journal.added(entry(A0));
    journal.added(entry(A1));
    const [file] = readdirSync(dir);
    expect(readFileSync(join(dir, file!), 'utf8').trim().split('\n')).toHaveLength(2);
    journal.stored([entry(A0)]);
    journal.close();
    // One record still waits for its page: the file stays, for the next start.
    expect(existsSync(join(dir, file!))).toBe(true);
    journal.stored([entry(A1)]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a journal that cannot be written leaves records to their pages, and says so once', () => {
    const dir = tempDir();
    const logged: string[] = [];
    const journal = new LocalPageJournal(join(dir, 'journal'), (line) => logged.push(line));
    // Its directory's place taken by a file: nothing can be opened there.
    writeFileSync(join(dir, 'journal'), 'not a directory');
    const first = entry(A0);
    expect(() => journal.added(first)).not.toThrow();
    journal.added(entry(A1));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/cannot write the page journal .* records are not protected against a crash/);
    // The entry's text is made all the same, for its page.
    expect(first.text).toContain(A0);
    journal.stored([first]);
  });

  it('the next start stores the journaled records no page holds, after each block\'s last seq, and deletes the files', async () => {
    const dir = tempDir();
    const journal = new LocalPageJournal(dir);
    for (const id of [A0, A1, A2, B0]) journal.added(entry(id, 11n));
    // Killed here: A0's page (seq 4 of its block) was stored, the others were not; the last line was cut.
    const [file] = readdirSync(dir);
    appendFileSync(join(dir, file!), '{"id":"gen-1795514400-AAAAAAAAAAAA03","org_');
    const journaled = readFileSync(join(dir, file!), 'utf8');
    const store = fakeStore([{ block: 'AAAAAAAAAAAA', seq: 4, entries: [entry(A0, 11n)] }]);
    const logged: string[] = [];
    const told: string[] = [];
    expect(await storeJournaledRecords(dir, store, (line) => logged.push(line), (record) => told.push(record.id))).toBe(3);
    // Each stored record is told of (for its metrics line), none held by a page already.
    expect(told).toEqual([A1, A2, B0]);
    const added = store.pages.slice(1).map((page) => ({ block: page.block, seq: page.seq, ids: page.entries.map((e) => e.record.id), amounts: page.entries.map((e) => e.claim.amount) }));
    expect(added).toEqual([
      { block: 'AAAAAAAAAAAA', seq: 5, ids: [A1], amounts: [11n] },
      { block: 'AAAAAAAAAAAA', seq: 6, ids: [A2], amounts: [11n] },
      { block: 'BBBBBBBBBBBB', seq: 1, ids: [B0], amounts: [11n] },
    ]);
    expect(store.pages[1]!.entries[0]!.record).toEqual({ ...entry(A1).record, infra: null });
    expect(logged).toEqual(['stored 3 generation record(s) the previous run had settled but not written']);
    expect(readdirSync(dir)).toEqual([]);
    // The same journal again (a start killed before it deleted the files): nothing is stored twice.
    writeFileSync(join(dir, file!), journaled);
    expect(await storeJournaledRecords(dir, store, () => undefined)).toBe(0);
    expect(store.pages).toHaveLength(4);
  });

  it('a provisional record stands until its own record replaces it or it is withdrawn, and keeps its file until then', () => {
    const dir = tempDir();
    const journal = new LocalPageJournal(dir);
    journal.provisional(entry(A0, 3n));
    journal.provisional(entry(A1, 3n));
    const [file] = readdirSync(dir);
    expect(readFileSync(join(dir, file!), 'utf8').split('\n').filter(Boolean).map((line) => line[0])).toEqual(['p', 'p']);
    journal.close();
    const record = entry(A0, 9n);
    journal.added(record);
    journal.withdrawn(A1);
    // A withdrawal of a request with no provisional record writes nothing.
    journal.withdrawn(A2);
    // The provisional records no longer stand: their closed file went; the record and the withdrawal wait in the next.
    expect(existsSync(join(dir, file!))).toBe(false);
    const [next] = readdirSync(dir);
    expect(readFileSync(join(dir, next!), 'utf8').split('\n').filter(Boolean).map((line) => line[0])).toEqual(['{', 'w']);
    journal.stored([record]);
    journal.close();
    expect(existsSync(dir)).toBe(false);
  });

  it('the next start charges a stream the kill cut (its provisional record), never one replaced or withdrawn', async () => {
    const dir = tempDir();
    const journal = new LocalPageJournal(dir);
    // A0 ended (its record replaces the provisional one), A1 was withdrawn, A2 and B0 were cut by the kill;
    // B0's provisional record had been stored by a page already (as if by another run).
    for (const id of [A0, A1, A2, B0]) journal.provisional(entry(id, 3n));
    journal.added(entry(A0, 9n));
    journal.withdrawn(A1);
    const store = fakeStore([{ block: 'BBBBBBBBBBBB', seq: 2, entries: [entry(B0, 3n)] }]);
    const logged: string[] = [];
    expect(await storeJournaledRecords(dir, store, (line) => logged.push(line))).toBe(2);
    expect(store.pages.slice(1).map((page) => ({ block: page.block, seq: page.seq, ids: page.entries.map((e) => e.record.id), amounts: page.entries.map((e) => e.claim.amount) }))).toEqual([
      { block: 'AAAAAAAAAAAA', seq: 1, ids: [A0], amounts: [9n] },
      { block: 'AAAAAAAAAAAA', seq: 2, ids: [A2], amounts: [3n] },
    ]);
    expect(logged).toEqual([
      'stored 1 generation record(s) the previous run had settled but not written',
      'charged 1 request(s) the previous run had upstream when it stopped: their prompts, at an estimate, and no output',
    ]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('lives in shared memory when the system has it, one directory per data directory; else in the data directory; or where GATEWAY_PAGE_JOURNAL_DIR says', () => {
    const shm = tempDir();
    const inMemory = pageJournalDir('/srv/gateway-data', {}, shm);
    expect(inMemory).toMatch(new RegExp(`^${shm}/model-gateway-[0-9a-f]{16}-page-journal$`));
    expect(pageJournalDir('/srv/gateway-data/', {}, shm)).toBe(inMemory);
    expect(pageJournalDir('/srv/other-data', {}, shm)).not.toBe(inMemory);
    expect(pageJournalDir('/srv/gateway-data', {}, join(shm, 'missing'))).toBe('/srv/gateway-data/page-journal');
    expect(pageJournalDir('/srv/gateway-data', { GATEWAY_PAGE_JOURNAL_DIR: '/var/lib/journal' }, shm)).toBe('/var/lib/journal');
  });

  it('names the shared-memory directory after the data directory itself: one deleted and made again gets another', () => {
    const shm = tempDir();
    const data = join(tempDir(), 'data');
    mkdirSync(data);
    const before = pageJournalDir(data, {}, shm);
    expect(pageJournalDir(data, {}, shm)).toBe(before);
    // The inode of the old directory stays taken while it is kept, so the new one's differs.
    renameSync(data, `${data}-old`);
    mkdirSync(data);
    expect(pageJournalDir(data, {}, shm)).not.toBe(before);
  });

  it('does not use a shared-memory directory that others may read or that is not a directory', () => {
    const shm = tempDir();
    const dir = pageJournalDir('/srv/gateway-data', {}, shm);
    // Made by the journal: only its owner may enter it, and it is used again.
    const journal = new LocalPageJournal(dir);
    journal.added(entry(A0));
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readdirSync(dir).map((name) => statSync(join(dir, name)).mode & 0o777)).toEqual([0o600]);
    expect(pageJournalDir('/srv/gateway-data', {}, shm)).toBe(dir);
    chmodSync(dir, 0o755);
    expect(pageJournalDir('/srv/gateway-data', {}, shm)).toBe('/srv/gateway-data/page-journal');
    rmSync(dir, { recursive: true });
    writeFileSync(dir, 'planted');
    expect(pageJournalDir('/srv/gateway-data', {}, shm)).toBe('/srv/gateway-data/page-journal');
  });

  it('a clean stop removes the journal\'s directory once nothing waits in it, and leaves it while records do', () => {
    const dir = join(tempDir(), 'journal');
    // A run that journals nothing makes no directory.
    new LocalPageJournal(dir);
    expect(existsSync(dir)).toBe(false);
    const journal = new LocalPageJournal(dir);
    const record = entry(A0);
    journal.added(record);
    journal.close();
    expect(readdirSync(dir)).toHaveLength(1);
    journal.stored([record]);
    journal.close();
    expect(existsSync(dir)).toBe(false);
  });

  it('a request\'s next attempt replaces its provisional record, also after a withdrawal; the next start charges the last that stands', async () => {
    const dir = tempDir();
    // One file: what decides is the order of its lines.
    const journal = new LocalPageJournal(dir);
    const attempt = (id: string, provider: string): PageEntry => ({ record: { ...generationRecord(id), provider }, claim: { kind: 'hold', amount: 3n } });
    // A0: an attempt at alpha, then one at beta (the first one's line no longer stands).
    journal.provisional(attempt(A0, 'alpha'));
    journal.provisional(attempt(A0, 'beta'));
    // A1: an attempt that failed at the provider (withdrawn), then another.
    journal.provisional(attempt(A1, 'alpha'));
    journal.withdrawn(A1);
    journal.provisional(attempt(A1, 'gamma'));
    // A2: failed and withdrawn, nothing after it.
    journal.provisional(attempt(A2, 'alpha'));
    journal.withdrawn(A2);
    const copy = tempDir();
    for (const name of readdirSync(dir)) writeFileSync(join(copy, name), readFileSync(join(dir, name)));
    const store = fakeStore([]);
    expect(await storeJournaledRecords(copy, store, () => undefined)).toBe(2);
    expect(store.pages.flatMap((page) => page.entries.map((e) => [e.record.id, e.record.provider])).sort()).toEqual([[A0, 'beta'], [A1, 'gamma']]);
    // Once the requests end, every file goes, and with a clean stop the directory.
    journal.added(entry(A0));
    journal.added(entry(A1));
    journal.stored([entry(A0), entry(A1)]);
    journal.close();
    expect(existsSync(dir)).toBe(false);
  });

  it('reads the files in the order written: by the run\'s own count, compared as numbers, not by the clock', async () => {
    const withdrawal = (id: string) => `w${JSON.stringify(id)}\n`;
    const provisional = (id: string) => `p${entryJson(entry(id, 3n))}\n`;
    // File 10 was written after file 9 (in the same millisecond); file 12 after file 11 though the clock had stepped back.
    const dir = tempDir();
    writeFileSync(join(dir, '1795514400000-7-9.jsonl'), withdrawal(A0));
    writeFileSync(join(dir, '1795514400000-7-10.jsonl'), provisional(A0));
    writeFileSync(join(dir, '1795514400500-7-11.jsonl'), provisional(A1));
    writeFileSync(join(dir, '1795514400100-7-12.jsonl'), withdrawal(A1));
    const store = fakeStore([]);
    expect(await storeJournaledRecords(dir, store, () => undefined)).toBe(1);
    expect(store.pages.flatMap((page) => page.entries.map((e) => e.record.id))).toEqual([A0]);
  });

  it('keeps a withdrawal as long as the file of the provisional record it withdraws', async () => {
    const dir = tempDir();
    // Two lines a file.
    const journal = new LocalPageJournal(dir, () => undefined, 2);
    const waiting = entry(A0);
    journal.added(waiting);
    journal.provisional(entry(A1, 3n));
    const [first] = readdirSync(dir);
    // A1 is withdrawn in the next file, whose other record is then stored; a third file begins.
    journal.withdrawn(A1);
    const stored = entry(A2);
    journal.added(stored);
    journal.stored([stored]);
    journal.added(entry(B0));
    expect(readdirSync(dir)).toHaveLength(3);
    // Killed here: A0 still waits in the first file beside A1's provisional record, so the second file's
    // withdrawal must still be there for the next start (which charges A0 and B0, never A1).
    const copy = tempDir();
    for (const name of readdirSync(dir)) writeFileSync(join(copy, name), readFileSync(join(dir, name)));
    const store = fakeStore([{ block: 'AAAAAAAAAAAA', seq: 1, entries: [stored] }]);
    expect(await storeJournaledRecords(copy, store, () => undefined)).toBe(2);
    expect(store.pages.slice(1).flatMap((page) => page.entries.map((e) => e.record.id)).sort()).toEqual([A0, B0]);
    // Once A0 is stored the first file goes, and the withdrawal's file with it.
    journal.stored([waiting]);
    expect(readdirSync(dir)).toHaveLength(1);
    expect(readdirSync(dir)).not.toContain(first);
  });
});
