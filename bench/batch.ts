// npm run bench:batch — a batch of small chat requests, run end to end by `npm start` against its simulator:
// the input is written to a file, uploaded in parts through the presigned URLs (read part by part, never
// whole), submitted, validated, run and finalized. Prints upload and validation MB/s, items per second,
// the peak RSS of each process, DynamoDB write units per item (from the stored items' sizes, at AWS's
// pricing), and checks that no item is lost, duplicated or charged twice.
//
// Options: --mb N (input size, default 200), --item-bytes N (bytes of each line, default 2048).
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, openSync, readSync, closeSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../lambdas/platform/dynamo/client.js';
import { pageFromItem } from '../lambdas/billing/page-repository.js';
import { blockOf } from '../lambdas/billing/pages.js';
import { itemKeys } from '../lambdas/platform/dynamo/item-keys.js';
import { generateKeyText } from '../lambdas/keys/key-format.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: number): number => {
  const at = args.indexOf(name);
  if (at < 0) return fallback;
  const value = Number(args[at + 1]);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} takes a positive number`);
  return value;
};
const MB = option('--mb', 200);
const ITEM_BYTES = Math.max(120, Math.floor(option('--item-bytes', 2048)));
const INPUT_BYTES = Math.min(Math.floor(MB * 1024 * 1024), 200 * 1024 * 1024);
const ADMIN_KEY = generateKeyText();
const work = mkdtempSync(join(tmpdir(), 'bench-batch-'));
const log = (text: string) => process.stderr.write(`[bench:batch] ${text}\n`);
const mib = (bytes: number) => bytes / 1024 / 1024;

/** Peak resident set of a process and its threads so far (VmHWM), in MiB; 0 once it is gone. */
function peakRss(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** Every process below `pid`. */
function descendants(pid: number): number[] {
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
  return children.flatMap((child) => [child, ...descendants(child)]);
}

function nameOf(pid: number): string | undefined {
  try {
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (command.includes('DynamoDBLocal')) return 'DynamoDB Local (Java)';
    if (command.includes('simulator')) return 'simulator (its own process)';
    if (command.includes('aggregator-worker')) return 'meter aggregator (its own process)';
    if (command.includes('aws-child')) return 'S3, SQS and KMS stand-ins (their own process)';
    if (command.includes('batch-child')) return 'batch runner (its own process: SQS event source, worker, state machine)';
    return undefined;
  } catch {
    return undefined;
  }
}

async function writeInput(file: string): Promise<{ items: number; bytes: number }> {
  const out = createWriteStream(file);
  let bytes = 0;
  let items = 0;
  const pad = 'Summarise this in one word please. ';
  while (true) {
    const head = JSON.stringify({ custom_id: `item-${items}`, body: { messages: [{ role: 'user', content: '' }], max_tokens: 16 } });
    const fill = Math.max(1, ITEM_BYTES - head.length - 1);
    const content = `${items} ${pad.repeat(Math.ceil(fill / pad.length))}`.slice(0, fill);
    const line = `${JSON.stringify({ custom_id: `item-${items}`, body: { messages: [{ role: 'user', content }], max_tokens: 16 } })}\n`;
    const size = Buffer.byteLength(line);
    if (bytes + size > INPUT_BYTES) break;
    if (!out.write(line)) await once(out, 'drain');
    bytes += size;
    items += 1;
  }
  out.end();
  await once(out, 'finish');
  return { items, bytes };
}

async function api(base: string, key: string, method: string, path: string, body?: unknown): Promise<any> {
  const reply = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await reply.text();
  if (!reply.ok) throw new Error(`${method} ${path} answered ${reply.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text);
}

async function main(): Promise<void> {
  const input = join(work, 'input.jsonl');
  log(`writing a ${mib(INPUT_BYTES).toFixed(0)} MiB input of ~${ITEM_BYTES}-byte chat requests`);
  const { items, bytes } = await writeInput(input);
  log(`${items.toLocaleString('en-US')} items, ${bytes.toLocaleString('en-US')} bytes`);

  const dataDir = join(work, 'gateway');
  // As package.json's `npm start` runs it, unless BENCH_GATEWAY_NODE_FLAGS says otherwise (to try other V8 settings).
  const nodeFlags = process.env.BENCH_GATEWAY_NODE_FLAGS?.split(' ').filter(Boolean) ?? ['--max-semi-space-size=32'];
  const child = spawn(process.execPath, [...nodeFlags, '--enable-source-maps', 'bin/start.mjs'], {
    cwd: process.cwd(),
    // DynamoDB Local holds a 200 MB batch's results (about as large again) and its pages: a larger heap than
    // npm start's default 512 MB (it ran out of it here).
    env: {
      ...process.env, PORT: '0', GATEWAY_DATA_DIR: dataDir, GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_INITIAL_CREDITS: '100000', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      DYNAMODB_LOCAL_JAVA_OPTS: process.env.DYNAMODB_LOCAL_JAVA_OPTS ?? '-Xms64m -Xmx2g -XX:+UseSerialGC -XX:+ExitOnOutOfMemoryError',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  const started = performance.now();
  while (!/listening on (http:\/\/[^\s]+\/api\/v1)/.test(output)) {
    if (child.exitCode !== null || performance.now() - started > 90_000) throw new Error(`npm start did not come up:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const base = /listening on (http:\/\/[^\s]+\/api\/v1)/.exec(output)![1]!;
  const peaks = new Map<string, number>();
  const sample = () => {
    const gateway = 'gateway (npm start: the HTTP server and handlers)';
    peaks.set(gateway, Math.max(peaks.get(gateway) ?? 0, peakRss(child.pid!)));
    for (const pid of descendants(child.pid!)) {
      const name = nameOf(pid);
      if (name) peaks.set(name, Math.max(peaks.get(name) ?? 0, peakRss(pid)));
    }
  };
  const sampler = setInterval(sample, 500);
  try {
    const created = await api(base, ADMIN_KEY, 'POST', '/keys', { name: 'bench batch' });
    const key = created.key as string;

    // Upload: the presigned part URLs, each part read from the file when it is sent.
    const t0 = performance.now();
    const upload = await api(base, key, 'POST', '/batches/uploads', { bytes });
    const fd = openSync(input, 'r');
    const parts: Array<{ part_number: number; etag: string }> = [];
    try {
      for (const part of upload.parts as Array<{ part_number: number; bytes: number; url: string }>) {
        const buffer = Buffer.alloc(part.bytes);
        readSync(fd, buffer, 0, part.bytes, (part.part_number - 1) * upload.part_bytes);
        const put = await fetch(part.url, { method: 'PUT', body: buffer });
        if (!put.ok) throw new Error(`part ${part.part_number} answered ${put.status}`);
        parts.push({ part_number: part.part_number, etag: put.headers.get('etag')! });
      }
    } finally {
      closeSync(fd);
    }
    await api(base, key, 'POST', `/batches/uploads/${upload.id}/complete`, { parts });
    const uploaded = performance.now();
    const batch = await api(base, key, 'POST', '/batches', { endpoint: '/v1/chat/completions', model: 'simulator/echo', input_upload_id: upload.id });
    const submitted = performance.now();
    log(`uploaded in ${((uploaded - t0) / 1000).toFixed(2)} s; batch ${batch.id}`);

    let validatedAt = 0;
    let state: any = batch;
    let lastLog = 0;
    while (!['completed', 'failed', 'cancelled', 'expired'].includes(state.status)) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      state = await api(base, key, 'GET', `/batches/${batch.id}?results_limit=1`);
      if (!validatedAt && state.status !== 'validating') validatedAt = performance.now();
      if (performance.now() - lastLog > 10_000) {
        lastLog = performance.now();
        const done = state.request_counts.completed + state.request_counts.failed;
        log(`${state.status}: ${done.toLocaleString('en-US')} of ${items.toLocaleString('en-US')} items`);
      }
    }
    const ended = performance.now();
    sample();
    if (state.status !== 'completed') throw new Error(`the batch ended ${state.status}: ${JSON.stringify(state.error)}`);

    // Once the meters have taken every page, the key is charged what the batch reports.
    let keyUsage = 0;
    for (let i = 0; i < 100; i += 1) {
      keyUsage = (await api(base, ADMIN_KEY, 'GET', `/keys/${created.data.hash}`)).data.usage;
      if (Math.abs(keyUsage - state.usage.cost) < 1e-9) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }

    // What the table holds: one result and one record per item, their sizes for the write units.
    const { dynamodb_endpoint: endpoint, table_name: tableName } = JSON.parse(readFileSync(join(dataDir, 'runtime.json'), 'utf8'));
    const db = createDocumentClient({ endpoint });
    let results = 0;
    let resultUnits = 0;
    const ids = new Set<string>();
    let records = 0;
    let charged = 0n;
    let pageUnits = 0;
    const kb = (item: Record<string, unknown>) => Math.max(1, Math.ceil(Buffer.byteLength(JSON.stringify(item, (_, v) => (typeof v === 'bigint' ? String(v) : v instanceof Uint8Array ? 'x'.repeat(Math.ceil(v.length * 4 / 3)) : v))) / 1024));
    // Read by key, never scanned (DynamoDB Local scans a large table in quadratic time): the results in windows
    // of lines, then each result's generation-id block, every page of it (a record written twice would show).
    const resultsKey = itemKeys.batchResultsOf(batch.id).pk;
    const generationIds: string[] = [];
    for (let from = 1; from <= items; from += 500) {
      let start: Record<string, unknown> | undefined;
      do {
        const page = await db.send(new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
          ExpressionAttributeValues: { ':pk': resultsKey, ':from': itemKeys.batchResult(batch.id, from).sk, ':to': itemKeys.batchResult(batch.id, from + 499).sk },
          ExclusiveStartKey: start,
        }));
        for (const item of page.Items ?? []) {
          results += 1;
          resultUnits += 2 * kb(item);
          if (typeof item.id === 'string') generationIds.push(item.id);
        }
        start = page.LastEvaluatedKey;
      } while (start);
    }
    // Each item's id names its own block (batch ids are derived one an item); a block read once, all its pages.
    const blocks = [...new Set(generationIds.map((id) => blockOf(id)).filter((block): block is string => block !== undefined))];
    let next = 0;
    const reader = async () => {
      while (next < blocks.length) {
        const block = blocks[next++]!;
        let start: Record<string, unknown> | undefined;
        do {
          const found = await db.send(new QueryCommand({
            TableName: tableName,
            KeyConditionExpression: 'pk = :pk AND begins_with(sk, :pages)',
            ExpressionAttributeValues: { ':pk': itemKeys.pagesOf(block).pk, ':pages': itemKeys.pageSortPrefix },
            ExclusiveStartKey: start,
          }));
          for (const item of found.Items ?? []) {
            for (const entry of pageFromItem(item).entries) {
              if (!entry.record.id.startsWith(`gen-${batch.created_at}-`)) continue;
              records += 1;
              ids.add(entry.record.id);
              charged += entry.record.cost.total;
              pageUnits += 2 * kb(item);
            }
          }
          start = found.LastEvaluatedKey;
        } while (start);
      }
    };
    await Promise.all(Array.from({ length: 16 }, reader));
    db.destroy();
    // Per item on AWS: its page and its result (transactional writes: 2 units a KB), its share of the batch's
    // count updates (one per 25 results) and the aggregator's marker of its page (2 units) and meters (about
    // 5 items per transaction of ~95 pages).
    const unitsPerItem = (pageUnits + resultUnits) / items + 2 / 25 + 2 + (5 * 2) / 95;

    const validationSeconds = (validatedAt - submitted) / 1000;
    const figures = [
      ['Input', `${items.toLocaleString('en-US')} chat requests of ~${ITEM_BYTES} bytes, ${mib(bytes).toFixed(1)} MiB`],
      ['Upload (8 MiB presigned parts, from a file)', `${(mib(bytes) / ((uploaded - t0) / 1000)).toFixed(1)} MiB/s`],
      ['Validation (submitted → in_progress: read from S3, every item checked, shards queued)', `${(mib(bytes) / validationSeconds).toFixed(1)} MiB/s (${validationSeconds.toFixed(2)} s)`],
      ['Items end to end (submitted → completed)', `${(items / ((ended - submitted) / 1000)).toFixed(0)} items/s (${((ended - submitted) / 1000).toFixed(1)} s)`],
      ...[...peaks].map(([name, value]) => [`Peak RSS, ${name}`, `${value.toFixed(0)} MiB`]),
      ['DynamoDB write units per item (AWS pricing, from stored sizes)', unitsPerItem.toFixed(2)],
      ['Results / records / distinct records', `${results.toLocaleString('en-US')} / ${records.toLocaleString('en-US')} / ${ids.size.toLocaleString('en-US')} of ${items.toLocaleString('en-US')}`],
      ['Charged (records) / batch usage / key usage', `$${(Number(charged) / 1e9).toFixed(6)} / $${state.usage.cost.toFixed(6)} / $${keyUsage.toFixed(6)}`],
    ];
    const lost = items - results;
    const duplicated = records - ids.size;
    const ok = lost === 0 && duplicated === 0 && records === items && Math.abs(Number(charged) / 1e9 - state.usage.cost) < 1e-9 && Math.abs(keyUsage - state.usage.cost) < 1e-9;
    figures.push(['Lost / duplicated / double-charged items', `${lost} / ${duplicated} / ${records - items} ${ok ? '✓' : '✗'}`]);
    const table = ['| Figure | Result |', '|---|---|', ...figures.map(([name, value]) => `| ${name} | ${value} |`)].join('\n');
    const report = `## Batch benchmark — ${new Date().toISOString()}\n\n${table}\n\nReproduce: \`npm run bench:batch\` (options \`--mb\`, \`--item-bytes\`); npm start on this machine with its simulator, DynamoDB Local on disk.\n`;
    console.log(report);
    writeFileSync(join('bench', 'results', 'batch.md'), report);
    if (!ok) process.exitCode = 1;
  } catch (err) {
    process.stderr.write(`npm start's output, last 4,000 characters:\n${output.slice(-4000)}\n`);
    throw err;
  } finally {
    clearInterval(sampler);
    child.kill('SIGTERM');
    await once(child, 'exit');
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
