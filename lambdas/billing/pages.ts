// Generation records written in pages. A process collects its finished generations' records and stores
// them a few at a time, one item per flush (a page), instead of one settlement transaction per request;
// the meter aggregator (aggregator.ts) reads the pages from the table's stream and moves the meters.
//
// Generation ids name their page's partition: a process hands out ids in blocks of BLOCK_SIZE, and every
// page holding records of a block is stored under that block (GENS#<block>, sk P#<seq>), so a record is
// found by its id with one Query of at most BLOCK_SIZE records, never a scan. On Lambda a page usually
// holds one record (the invocation's); under `npm start` and in batch workers it holds many.
import { randomBytes } from 'node:crypto';
import type { Logger } from '../platform/logger.js';
import type { GenerationRecord } from './generation-record.js';
import { entryItems, markerItem, MAX_TRANSACTION_ITEMS } from './page-items.js';

/** Generation ids per block: bounds the records one lookup reads and the seqs one applied-marker holds. */
export const BLOCK_SIZE = 64;
/**
 * Records per page, at most: a block's. The aggregator applies a page in one transaction with its block's
 * marker, so a page is also closed before the items its records touch (page-items.ts) would pass
 * DynamoDB's 100 per transaction: records of one key and lease share all but their rollup rows, while
 * records with exact holds on distinct keys touch five items each.
 */
export const PAGE_RECORDS = BLOCK_SIZE;
/**
 * How long a finished record waits for others to share its page. Under load a page then holds about
 * 10 ms of records: each page write costs the process about 0.6 ms of CPU in the SDK and DynamoDB Local
 * about 1.8 ms, so fewer, fuller pages are what keep a busy process's money path cheap.
 */
export const FLUSH_DELAY_MS = 10;

const PAGED_ID = /^gen-\d+-([0-9A-Za-z]{12})[0-9a-z]{2}$/;
const ALPHANUMERIC = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Each byte as one of 62 letters and digits (ids, page blocks). */
export function alphanumeric(bytes: Iterable<number>): string {
  let text = '';
  for (const byte of bytes) text += ALPHANUMERIC[byte % 62];
  return text;
}

function randomBlock(): string {
  // 12 characters of 62: about 71 bits, so blocks of different processes never meet.
  return alphanumeric(randomBytes(12));
}

/**
 * `gen-<unix seconds>-<block><n>`: 12 alphanumeric characters of block, then the record's number in it in
 * two base-36 digits. Ids from before pages (`gen-<seconds>-<20 base64url characters>`) have no block, but a
 * few of them read like one (their random part can hold a `-`): a lookup falls back to their own item.
 */
export function blockOf(generationId: string): string | undefined {
  return PAGED_ID.exec(generationId)?.[1];
}

/** Hands out generation ids, BLOCK_SIZE to a block. */
export class GenerationIds {
  private block = randomBlock();
  private used = 0;

  next(nowMs: number): string {
    if (this.used === BLOCK_SIZE) {
      this.block = randomBlock();
      this.used = 0;
    }
    const n = this.used;
    this.used += 1;
    return `gen-${Math.floor(nowMs / 1000)}-${this.block}${n.toString(36).padStart(2, '0')}`;
  }
}

/** The money a record moves, beside its cost: what it releases from what was held for it. */
export type Claim =
  /** An exact hold (HOLD#<generation id>) of `amount`, deleted when the record is applied. */
  | { kind: 'hold'; amount: bigint }
  /** What the request spent of a lease's reservation (its cost, up to what it reserved). */
  | { kind: 'lease'; leaseId: string; amount: bigint }
  /**
   * Nothing was held: a request that could cost no credits (served only with the customer's own keys, or
   * free models) when no limit of its key or workspace counts BYOK spend and its organization is not in
   * debt. Its record charges its cost and releases nothing.
   */
  | { kind: 'none'; amount: 0n };

export interface PageEntry {
  record: GenerationRecord;
  claim: Claim;
  /** The record's JSON without its infrastructure cost, if made already (page-codec.ts recordJson). */
  json?: string;
  /** The whole entry's JSON as its page stores it, if made already (page-codec.ts entryJson: the journal's line). */
  text?: string;
}

export interface Page {
  block: string;
  /** 1, 2, … per block, in the order the process wrote them. */
  seq: number;
  entries: PageEntry[];
  /** Epoch ms the page was written (stored; the aggregator's lag is measured from it). */
  writtenAt?: number;
}

/** Keeps records between their settlement and their page's store (PageWriter.journal). */
export interface PageJournal {
  added(entry: PageEntry): void;
  stored(entries: readonly PageEntry[]): void;
  /**
   * The record a request whose attempt is upstream is charged should the process die before it ends (its
   * prompt, no output), kept until its own record is added, its next attempt's replaces it, or it is withdrawn.
   */
  provisional(entry: PageEntry): void;
  /** The attempt of a provisional record failed at the provider, or its request ended without a record of its own. */
  withdrawn(generationId: string): void;
}

/** Where pages are stored (page-repository.ts): a put that is safe to repeat. */
export interface PageStore {
  put(page: Page): Promise<{ writeUnits: number }>;
}

export interface PageWriterDeps {
  store: PageStore;
  log: Logger;
  sleep: (ms: number) => Promise<void>;
  /** A page is never lost to a store that fails for a while: it is retried this long (ms) before logging it for reconciliation. */
  retryForMs?: number;
  flushDelayMs?: number;
  pageRecords?: number;
}

interface Pending {
  entry: PageEntry;
  resolve: (stored: StoredEntry) => void;
}

/** The records waiting for one block's next page, and the items applying them would write. */
interface PendingPage {
  records: Pending[];
  items: Set<string>;
}

/** A record as stored: its page, and the write capacity of the page (its share of it). */
export interface StoredEntry {
  stored: boolean;
  writeUnits: number;
  /**
   * Not stored, for certain: another run of the same batch item committed first (batches/item-commits.ts),
   * so this record charges nothing.
   */
  duplicate?: boolean;
}

/**
 * Collects records and writes them in pages. `add` resolves once the record's page is stored (or, after
 * the store failed for `retryForMs`, logged for reconciliation); it never rejects. `flush` writes whatever
 * waits, at once (a Lambda invocation's end, shutdown).
 */
export class PageWriter {
  /**
   * Whether records of invocations that ended may wait for others in a shared page. On Lambda an instance
   * serves one request at a time and may be frozen once it returns: each invocation writes its page before
   * it ends (the handler's flush). A server that runs many invocations at once and is never frozen (npm
   * start) sets this, and a record then waits up to FLUSH_DELAY_MS for the others even when no other
   * request is running at that moment (under a closed loop of a few connections that is often).
   */
  shared = false;
  /**
   * Where a process that may be killed between a reply and its record's page (npm start: one process, many
   * requests, pages shared for up to FLUSH_DELAY_MS and written after the replies) keeps each record the
   * moment it is added, until its page is stored: bin/local/page-journal.ts. On Lambda the invocation
   * writes its page before it ends, and there is none.
   */
  journal: PageJournal | undefined;
  private readonly pending = new Map<string, PendingPage>();
  private readonly seqs = new Map<string, number>();
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: PageWriterDeps) {}

  /** Whether records are journaled: only then is a provisional record worth making. */
  get journaled(): boolean {
    return this.journal !== undefined;
  }

  /**
   * Journals what a request in flight is charged should the process be killed before its own record is
   * added (PageJournal.provisional); nothing without a journal. Never stored by this process.
   */
  provisional(entry: PageEntry): void {
    this.journal?.provisional(entry);
  }

  /** The request ended without a record: its provisional one, if any, no longer stands. */
  withdraw(generationId: string): void {
    this.journal?.withdrawn(generationId);
  }

  add(entry: PageEntry): Promise<StoredEntry> {
    const block = blockOf(entry.record.id);
    if (block === undefined) throw new Error(`generation id ${entry.record.id} names no page block`);
    const items = entryItems(entry);
    // Kept before add returns, so before the reply it settles can be written.
    this.journal?.added(entry);
    return new Promise((resolve) => {
      let page = this.pending.get(block);
      if (page && items.some((item) => !page!.items.has(item)) && new Set([...page.items, ...items]).size > MAX_TRANSACTION_ITEMS) {
        this.write(block);
        page = undefined;
      }
      if (!page) {
        page = { records: [], items: new Set([markerItem(block)]) };
        this.pending.set(block, page);
      }
      page.records.push({ entry, resolve });
      for (const item of items) page.items.add(item);
      if (page.records.length >= (this.deps.pageRecords ?? PAGE_RECORDS)) this.write(block);
      else this.timer ??= setTimeout(() => {
        this.timer = undefined;
        this.flushPending();
      }, this.deps.flushDelayMs ?? FLUSH_DELAY_MS);
    });
  }

  /** Writes everything waiting and resolves when every page begun so far is stored. */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.flushPending();
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  private flushPending(): void {
    for (const block of [...this.pending.keys()]) this.write(block);
  }

  private write(block: string): void {
    const queue = this.pending.get(block)?.records;
    if (!queue || queue.length === 0) return;
    this.pending.delete(block);
    const seq = (this.seqs.get(block) ?? 0) + 1;
    this.seqs.set(block, seq);
    const page: Page = { block, seq, entries: queue.map((pending) => pending.entry) };
    const done = this.store(page).then((result) => {
      // A page that could not be stored stays in the journal, for the next start to store.
      if (result.stored) this.journal?.stored(page.entries);
      const share = result.stored ? result.writeUnits / queue.length : 0;
      for (const pending of queue) pending.resolve({ stored: result.stored, writeUnits: share });
    });
    this.inFlight.add(done);
    void done.finally(() => this.inFlight.delete(done));
  }

  private async store(page: Page): Promise<{ stored: boolean; writeUnits: number }> {
    const deadline = Date.now() + (this.deps.retryForMs ?? 40_000);
    for (let attempt = 1; ; attempt += 1) {
      try {
        const { writeUnits } = await this.deps.store.put(page);
        return { stored: true, writeUnits };
      } catch (err) {
        if (Date.now() >= deadline) {
          // Everything needed to charge these by hand: the records and what they held (or, with a journal,
          // where the next start finds them: it stores them itself, and nothing is to be done by hand).
          this.deps.log.error(this.journal ? 'generation page not stored; kept in the page journal, which the next start stores' : 'generation page not stored; reconcile by hand', {
            block: page.block,
            seq: page.seq,
            error: String(err),
            records: page.entries.map(({ record, claim }) => ({
              generation_id: record.id, org_id: record.org_id, key_hash: record.key_hash, workspace_id: record.workspace_id,
              cost: record.cost.total.toString(), is_byok: record.is_byok, claim: claim.kind, held: claim.amount.toString(),
            })),
          });
          return { stored: false, writeUnits: 0 };
        }
        this.deps.log.warn('generation page write failed; retrying', { block: page.block, seq: page.seq, attempt, error: String(err) });
        const cap = Math.min(1000, 4 * 2 ** attempt);
        await this.deps.sleep(cap / 2 + Math.random() * cap / 2);
      }
    }
  }
}
