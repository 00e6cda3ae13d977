// npm start's journal of generation records between settlement and their page. The gateway writes a
// record's page after the reply (records of requests ending within FLUSH_DELAY_MS share one), and under
// load that page can take seconds to be stored; a process killed in that gap (SIGKILL, a crash) took the
// records with it, and the next start, giving back what the previous run's leases and holds had not spent,
// gave back those requests' money too: replies served and never charged. Each record is now appended to a
// file the moment it is settled (before its reply's last bytes are written; a synchronous write, which the
// operating system keeps whatever happens to the process), and the next start stores every record it finds
// there that no page holds, before it takes back leases and holds.
//
// A file takes ROTATE_AFTER records, then the next one begins; a file whose records are all in stored pages
// is deleted. One line per record: the entry's JSON as a page stores it (page-codec.ts).
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { entryFromJson, entryJson } from '../../lambdas/billing/page-codec.js';
import { blockOf, type Page, type PageEntry, type PageJournal } from '../../lambdas/billing/pages.js';

/** Records per journal file. */
const ROTATE_AFTER = 4096;

interface JournalFile {
  path: string;
  /** Records written to it whose page is not stored yet. */
  open: number;
  /** No more records go to it. */
  closed: boolean;
}

export class LocalPageJournal implements PageJournal {
  private current: JournalFile | undefined;
  private fd: number | undefined;
  private written = 0;
  private sequence = 0;
  /** The file each record not yet stored was written to, by generation id. */
  private readonly fileOf = new Map<string, JournalFile>();

  private failing = false;

  constructor(private readonly directory: string, private readonly log: (line: string) => void = () => undefined) {
    mkdirSync(directory, { recursive: true });
  }

  added(entry: PageEntry): void {
    // Made once: the page writes the same text.
    entry.text = entryJson(entry);
    try {
      if (this.fd === undefined || this.written >= ROTATE_AFTER) this.rotate();
      writeSync(this.fd!, `${entry.text}\n`);
    } catch (err) {
      // A full or read-only disk: the record still goes to its page as before, only without the journal's
      // protection against a kill; said once per stretch of failures, not per request.
      if (!this.failing) this.log(`cannot write the page journal in ${this.directory} (${String(err)}): records are not protected against a crash until it can`);
      this.failing = true;
      return;
    }
    this.failing = false;
    this.written += 1;
    this.current!.open += 1;
    this.fileOf.set(entry.record.id, this.current!);
  }

  stored(entries: readonly PageEntry[]): void {
    for (const entry of entries) {
      const file = this.fileOf.get(entry.record.id);
      if (!file) continue;
      this.fileOf.delete(entry.record.id);
      file.open -= 1;
      if (file.open === 0 && file.closed) rmSync(file.path, { force: true });
    }
  }

  /** Closes the file being written (a clean stop, after the last pages were stored): deleted when all its records are. */
  close(): void {
    this.closeCurrent();
  }

  private rotate(): void {
    this.closeCurrent();
    this.sequence += 1;
    const path = join(this.directory, `${Date.now()}-${process.pid}-${this.sequence}.jsonl`);
    mkdirSync(this.directory, { recursive: true });
    this.fd = openSync(path, 'a');
    this.current = { path, open: 0, closed: false };
    this.written = 0;
  }

  private closeCurrent(): void {
    if (this.fd === undefined || !this.current) return;
    closeSync(this.fd);
    this.fd = undefined;
    this.current.closed = true;
    if (this.current.open === 0) rmSync(this.current.path, { force: true });
    this.current = undefined;
  }
}

/** What the next start needs of the page store: a block's stored records and highest seq, and a put. */
export interface JournalStore {
  blockContents(block: string): Promise<{ maxSeq: number; ids: Set<string> }>;
  put(page: Page): Promise<unknown>;
}

/**
 * Stores every record the journal files in `directory` hold that no stored page holds (a previous run's,
 * killed before their pages were stored), each in a page of its own under its block after the block's
 * last seq, then deletes the files. Returns how many records it stored. A line that cannot be read (the
 * last one, cut by the kill) is skipped: its record's reply had not been written.
 */
export async function storeJournaledRecords(directory: string, store: JournalStore, log: (line: string) => void): Promise<number> {
  let names: string[];
  try {
    names = readdirSync(directory).filter((name) => name.endsWith('.jsonl')).sort();
  } catch {
    return 0;
  }
  const byBlock = new Map<string, Map<string, PageEntry>>();
  for (const name of names) {
    for (const line of readFileSync(join(directory, name), 'utf8').split('\n')) {
      if (line.length === 0) continue;
      let entry: PageEntry;
      try {
        entry = entryFromJson(line);
      } catch {
        continue;
      }
      const block = blockOf(entry.record.id);
      if (block === undefined) continue;
      let entries = byBlock.get(block);
      if (!entries) byBlock.set(block, (entries = new Map()));
      entries.set(entry.record.id, entry);
    }
  }
  let stored = 0;
  for (const [block, entries] of byBlock) {
    const { maxSeq, ids } = await store.blockContents(block);
    let seq = maxSeq;
    for (const entry of entries.values()) {
      if (ids.has(entry.record.id)) continue;
      seq += 1;
      await store.put({ block, seq, entries: [entry] });
      stored += 1;
    }
  }
  for (const name of names) rmSync(join(directory, name), { force: true });
  if (stored > 0) log(`stored ${stored} generation record(s) the previous run had settled but not written`);
  return stored;
}
