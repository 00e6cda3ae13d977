// npm start's journal of generation records between settlement and their page. The gateway writes a
// record's page after the reply (records of requests ending within FLUSH_DELAY_MS share one), and under
// load that page can take seconds to be stored; a process killed in that gap (SIGKILL, a crash) took the
// records with it, and the next start, giving back what the previous run's leases and holds had not spent,
// gave back those requests' money too: replies served and never charged. Each record is now appended to a
// file the moment it is settled (before its reply's last bytes are written; a synchronous write, which the
// operating system keeps whatever happens to the process), and the next start stores every record it finds
// there that no page holds, before it takes back leases and holds.
//
// A request killed while upstream would otherwise leave nothing: its record is made when it ends. So as each
// attempt goes upstream (the provider bills the prompt of a request it was sent), a provisional record is
// journaled, which charges its prompt at an estimate and no output; its own record, added when it ends,
// takes its place, and an attempt failing at the provider, or a request that ends without a record (its
// hold given back), withdraws it.
//
// A file takes ROTATE_AFTER lines, then the next one begins; a file whose records are all in stored pages
// (and whose provisional records are all replaced or withdrawn) is deleted. One line per record: the entry's
// JSON as a page stores it (page-codec.ts); a provisional record's line is `p` and that JSON, a withdrawal's
// `w` and the generation id.
import { accessSync, closeSync, constants, mkdirSync, openSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync, writeSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import { entryFromJson, entryJson } from '../../lambdas/billing/page-codec.js';
import type { GenerationRecord } from '../../lambdas/billing/generation-record.js';
import { blockOf, type Page, type PageEntry, type PageJournal } from '../../lambdas/billing/pages.js';

/** Where the journal lived before it moved to memory: still read at start-up, for a run of an older version. */
export const dataDirJournal = (dataDir: string) => join(dataDir, 'page-journal');

/**
 * Where the journal of `dataDir`'s gateway lives: GATEWAY_PAGE_JOURNAL_DIR if set (one gateway to a
 * directory); else, where the system has a shared-memory file system (Linux's /dev/shm, a tmpfs), a
 * directory there named after the data directory (its path, device and inode: a data directory deleted and
 * made again is another, whose start does not store the old one's records); else `<dataDir>/page-journal`.
 * In memory, a write never waits for the disk: on a disk DynamoDB Local syncs its files to, each append
 * could wait behind its journal commits, and measured with `npm run bench:ab` the gateway spent 8-26 % more
 * CPU per request with the journal on disk. A tmpfs keeps what was written when the process dies, which is
 * what the journal is for; not across a reboot of the machine (where an unsynced write to a disk is not
 * certain either). A directory there that another user owns, or that others may read, is not used.
 */
export function pageJournalDir(dataDir: string, env: NodeJS.ProcessEnv = process.env, shm = '/dev/shm'): string {
  if (env.GATEWAY_PAGE_JOURNAL_DIR) return resolve(env.GATEWAY_PAGE_JOURNAL_DIR);
  try {
    accessSync(shm, constants.W_OK);
    if (!statSync(shm).isDirectory()) return dataDirJournal(dataDir);
    const data = statSync(dataDir, { throwIfNoEntry: false });
    const identity = `${resolve(dataDir)}\0${data?.dev ?? ''}\0${data?.ino ?? ''}`;
    const dir = join(shm, `model-gateway-${createHash('sha256').update(identity).digest('hex').slice(0, 16)}-page-journal`);
    const existing = statSync(dir, { throwIfNoEntry: false });
    if (existing && (!existing.isDirectory() || existing.uid !== process.getuid?.() || (existing.mode & 0o077) !== 0)) return dataDirJournal(dataDir);
    return dir;
  } catch {
    // No shared memory here (macOS, Windows): the data directory.
  }
  return dataDirJournal(dataDir);
}

/**
 * Lines per journal file. A file stays while any record in it waits for its page, and while any provisional
 * record in it stands: a long request (a long stream) keeps its file as long as it runs. Small files keep what long streams
 * hold small (a file of 256 lines is about 300 KB), for a rotation (a close, an open, a delete) every 256.
 */
const ROTATE_AFTER = 256;

interface JournalFile {
  path: string;
  /**
   * Records written to it whose page is not stored yet, provisional records that still stand, and
   * withdrawals of provisional records whose file is still there.
   */
  open: number;
  /** No more records go to it. */
  closed: boolean;
  /** Files holding withdrawals of this file's provisional records: each kept until this one is deleted. */
  withdrawals?: JournalFile[];
}

export class LocalPageJournal implements PageJournal {
  private current: JournalFile | undefined;
  private fd: number | undefined;
  private written = 0;
  private sequence = 0;
  /** The file each record not yet stored was written to, by generation id. */
  private readonly fileOf = new Map<string, JournalFile>();
  /** The file each provisional record that still stands was written to, by generation id. */
  private readonly provisionalFileOf = new Map<string, JournalFile>();

  private failing = false;

  /** The directory is made with the first file: a run that journals nothing leaves nothing behind. */
  constructor(private readonly directory: string, private readonly log: (line: string) => void = () => undefined, private readonly rotateAfter = ROTATE_AFTER) {}

  added(entry: PageEntry): void {
    // Made once: the page writes the same text.
    entry.text = entryJson(entry);
    const file = this.write(`${entry.text}\n`);
    // Its provisional record no longer stands once this one is written (or, should it not be, once the
    // record is on its way to its page anyway).
    this.replaceProvisional(entry.record.id);
    if (!file) return;
    file.open += 1;
    this.fileOf.set(entry.record.id, file);
  }

  provisional(entry: PageEntry): void {
    const file = this.write(`p${entryJson(entry)}\n`);
    // A request's later attempt: the line just written takes the place of its earlier one.
    this.replaceProvisional(entry.record.id);
    if (!file) return;
    file.open += 1;
    this.provisionalFileOf.set(entry.record.id, file);
  }

  withdrawn(generationId: string): void {
    const provisional = this.provisionalFileOf.get(generationId);
    if (!provisional) return;
    // Written before the hold is given back: a kill after it must not charge what was released. The
    // withdrawal's file is kept as long as the provisional record's is (which other records may keep):
    // without it, a next start would charge the provisional record. Should the withdrawal not be written,
    // the provisional record's file may still be deleted with the others.
    const file = this.write(`w${JSON.stringify(generationId)}\n`);
    if (file && file !== provisional) {
      file.open += 1;
      (provisional.withdrawals ??= []).push(file);
    }
    this.replaceProvisional(generationId);
  }

  /** Appends `line` to the current file (a new one when due): the file, or undefined when it cannot be written. */
  private write(line: string): JournalFile | undefined {
    try {
      if (this.fd === undefined || this.written >= this.rotateAfter) this.rotate();
      writeSync(this.fd!, line);
    } catch (err) {
      // A full or read-only disk: records still go to their pages as before, only without the journal's
      // protection against a kill; said once per stretch of failures, not per request.
      if (!this.failing) this.log(`cannot write the page journal in ${this.directory} (${String(err)}): records are not protected against a crash until it can`);
      this.failing = true;
      return undefined;
    }
    this.failing = false;
    this.written += 1;
    return this.current!;
  }

  private replaceProvisional(generationId: string): void {
    const file = this.provisionalFileOf.get(generationId);
    if (!file) return;
    this.provisionalFileOf.delete(generationId);
    this.release(file);
  }

  private release(file: JournalFile): void {
    file.open -= 1;
    if (file.open === 0 && file.closed) this.delete(file);
  }

  private delete(file: JournalFile): void {
    try {
      rmSync(file.path, { force: true });
    } catch (err) {
      // Left behind, a next start reads it again (and skips what pages hold), with the withdrawals it needs;
      // never a reason for a request to fail.
      this.log(`cannot delete the page journal file ${file.path} (${String(err)})`);
      return;
    }
    // Its provisional records are gone: their withdrawals need not be kept.
    for (const withdrawal of file.withdrawals?.splice(0) ?? []) this.release(withdrawal);
  }

  stored(entries: readonly PageEntry[]): void {
    for (const entry of entries) {
      const file = this.fileOf.get(entry.record.id);
      if (!file) continue;
      this.fileOf.delete(entry.record.id);
      this.release(file);
    }
  }

  /**
   * Closes the file being written (a clean stop, after the last pages were stored): deleted when all its
   * records are, and the directory with it when nothing is left in it.
   */
  close(): void {
    this.closeCurrent();
    try {
      rmdirSync(this.directory);
    } catch {
      // Records wait there for the next start, or it is gone already.
    }
  }

  private rotate(): void {
    this.closeCurrent();
    this.sequence += 1;
    const path = join(this.directory, `${Date.now()}-${process.pid}-${this.sequence}.jsonl`);
    mkdirSync(this.directory, { recursive: true, mode: 0o700 });
    this.fd = openSync(path, 'a', 0o600);
    this.current = { path, open: 0, closed: false };
    this.written = 0;
  }

  private closeCurrent(): void {
    if (this.fd === undefined || !this.current) return;
    closeSync(this.fd);
    this.fd = undefined;
    this.current.closed = true;
    if (this.current.open === 0) this.delete(this.current);
    this.current = undefined;
  }
}

/**
 * Journal file names (`<ms>-<pid>-<n>.jsonl`) with each run's in the order written: by process, then by the
 * run's own count (not the clock, which may step back). The order between runs does not matter: a
 * generation id is one run's.
 */
function inWrittenOrder(a: string, b: string): number {
  const [timeA = 0, pidA = 0, nA = 0] = a.split(/[-.]/).map(Number);
  const [timeB = 0, pidB = 0, nB = 0] = b.split(/[-.]/).map(Number);
  return pidA - pidB || nA - nB || timeA - timeB || (a < b ? -1 : a > b ? 1 : 0);
}

/** What the next start needs of the page store: a block's stored records and highest seq, and a put. */
export interface JournalStore {
  blockContents(block: string): Promise<{ maxSeq: number; ids: Set<string> }>;
  put(page: Page): Promise<unknown>;
}

/**
 * Stores every record the journal files in `directory` hold that no stored page holds (a previous run's,
 * killed before their pages were stored), each in a page of its own under its block after the block's
 * last seq, then deletes the files; `onStored` is told of each (for its metrics line). A provisional record
 * is stored only when its request has no record of its own and was not withdrawn: a request the kill cut.
 * Returns how many records it stored. A line that cannot be read (the last one, cut by the kill) is
 * skipped: its record's reply had not been written.
 */
export async function storeJournaledRecords(directory: string, store: JournalStore, log: (line: string) => void, onStored: (record: GenerationRecord) => void = () => undefined): Promise<number> {
  let names: string[];
  try {
    names = readdirSync(directory).filter((name) => name.endsWith('.jsonl')).sort(inWrittenOrder);
  } catch {
    return 0;
  }
  const records = new Map<string, PageEntry>();
  const provisional = new Map<string, PageEntry>();
  const withdrawn = new Set<string>();
  for (const name of names) {
    for (const line of readFileSync(join(directory, name), 'utf8').split('\n')) {
      try {
        if (line.startsWith('{')) {
          const entry = entryFromJson(line);
          records.set(entry.record.id, entry);
        } else if (line.startsWith('p')) {
          // In the order written: a provisional record after a withdrawal (the request's next attempt) stands.
          const entry = entryFromJson(line.slice(1));
          provisional.set(entry.record.id, entry);
          withdrawn.delete(entry.record.id);
        } else if (line.startsWith('w')) {
          withdrawn.add(String(JSON.parse(line.slice(1))));
        }
      } catch {
        continue;
      }
    }
  }
  for (const [id, entry] of provisional) if (!records.has(id) && !withdrawn.has(id)) records.set(id, entry);
  const byBlock = new Map<string, PageEntry[]>();
  for (const [id, entry] of records) {
    const block = blockOf(id);
    if (block === undefined) continue;
    let entries = byBlock.get(block);
    if (!entries) byBlock.set(block, (entries = []));
    entries.push(entry);
  }
  let stored = 0;
  let cut = 0;
  for (const [block, entries] of byBlock) {
    const { maxSeq, ids } = await store.blockContents(block);
    let seq = maxSeq;
    for (const entry of entries) {
      if (ids.has(entry.record.id)) continue;
      seq += 1;
      await store.put({ block, seq, entries: [entry] });
      onStored(entry.record);
      if (provisional.get(entry.record.id) === entry) cut += 1;
      else stored += 1;
    }
  }
  for (const name of names) rmSync(join(directory, name), { force: true });
  if (stored > 0) log(`stored ${stored} generation record(s) the previous run had settled but not written`);
  if (cut > 0) log(`charged ${cut} request(s) the previous run had upstream when it stopped: their prompts, at an estimate, and no output`);
  return stored + cut;
}
