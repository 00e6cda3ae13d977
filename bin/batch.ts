// npm run batch -- <command>: batches from the command line, against any gateway (npm start or a deployment).
//
//   submit <file.jsonl> [--endpoint /v1/chat/completions] [--model M] [--no-follow]
//        uploads the file in parts (a progress bar on stderr), submits it, and follows the batch until it
//        ends (its id goes to stdout first, its final state last)
//   status <id>          the batch (without its results)
//   results <id> [--out file]   every result as JSON Lines (to stdout, or the file)
//   cancel <id>
//   list
//
// GATEWAY_URL (default http://127.0.0.1:8080/api/v1) and GATEWAY_API_KEY (a regular key) say where and who.
import { closeSync, createWriteStream, openSync, readSync, statSync } from 'node:fs';
import { once } from 'node:events';

const ENDED = ['completed', 'failed', 'cancelled', 'expired'];

interface Options {
  base: string;
  key: string;
  err: (text: string) => void;
  out: (text: string) => void;
  /** Whether stderr is a terminal (the progress bar redraws one line) or a log (a line per step). */
  tty: boolean;
}

class CliError extends Error {}

async function api(options: Options, method: string, path: string, body?: unknown): Promise<any> {
  const reply = await fetch(`${options.base}${path}`, {
    method,
    headers: { authorization: `Bearer ${options.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await reply.text();
  if (!reply.ok) {
    let message = text.slice(0, 500);
    try {
      message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
    } catch {
      // not JSON: the text as it is
    }
    throw new CliError(`${method} ${path}: ${reply.status} ${message}`);
  }
  return text ? JSON.parse(text) : undefined;
}

function bar(done: number, total: number, seconds: number): string {
  const width = 30;
  const filled = total === 0 ? width : Math.round((done / total) * width);
  const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
  const rate = seconds > 0 ? `${mib(done / seconds)} MiB/s` : '';
  return `uploading [${'='.repeat(filled)}${' '.repeat(width - filled)}] ${total === 0 ? 100 : Math.floor((done / total) * 100)}% ${mib(done)}/${mib(total)} MiB ${rate}`;
}

async function submit(options: Options, file: string, flags: { endpoint: string; model?: string; follow: boolean }): Promise<number> {
  const bytes = statSync(file).size;
  if (bytes === 0) throw new CliError(`${file} is empty`);
  const upload = await api(options, 'POST', '/batches/uploads', { bytes });
  const started = Date.now();
  const fd = openSync(file, 'r');
  const parts: Array<{ part_number: number; etag: string }> = [];
  let sent = 0;
  try {
    for (const part of upload.parts as Array<{ part_number: number; bytes: number; url: string }>) {
      // One part in memory at a time.
      const buffer = Buffer.alloc(part.bytes);
      readSync(fd, buffer, 0, part.bytes, (part.part_number - 1) * upload.part_bytes);
      const put = await fetch(part.url, { method: 'PUT', body: buffer });
      if (!put.ok) throw new CliError(`uploading part ${part.part_number}: ${put.status} ${(await put.text()).slice(0, 300)}`);
      parts.push({ part_number: part.part_number, etag: put.headers.get('etag') ?? '' });
      sent += part.bytes;
      const line = bar(sent, bytes, (Date.now() - started) / 1000);
      options.err(options.tty ? `\r${line}` : `${line}\n`);
    }
  } finally {
    closeSync(fd);
  }
  if (options.tty) options.err('\n');
  await api(options, 'POST', `/batches/uploads/${upload.id}/complete`, { parts });
  const batch = await api(options, 'POST', '/batches', { endpoint: flags.endpoint, ...(flags.model ? { model: flags.model } : {}), input_upload_id: upload.id });
  options.out(`${batch.id}\n`);
  if (!flags.follow) return 0;
  return follow(options, batch.id as string);
}

async function follow(options: Options, id: string): Promise<number> {
  let last = '';
  for (;;) {
    const batch = await api(options, 'GET', `/batches/${id}?results_limit=1`);
    const counts = batch.request_counts as { total: number; completed: number; failed: number };
    const line = `${batch.status}: ${counts.completed + counts.failed} of ${counts.total || '?'} items (${counts.completed} completed, ${counts.failed} failed)`;
    if (line !== last) {
      options.err(`${line}\n`);
      last = line;
    }
    if (ENDED.includes(batch.status as string)) {
      const { results: _results, results_next: _next, ...shown } = batch;
      options.out(`${JSON.stringify(shown)}\n`);
      if (batch.status === 'completed') options.err(`results: npm run batch -- results ${id} --out ${id}.jsonl\n`);
      return batch.status === 'completed' ? 0 : 1;
    }
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

async function results(options: Options, id: string, file: string | undefined): Promise<number> {
  // An ended batch answers with a link to its results file: fetch follows it (and drops the key on the way).
  const reply = await fetch(`${options.base}/batches/${id}/results`, { headers: { authorization: `Bearer ${options.key}` } });
  if (!reply.ok || !reply.body) throw new CliError(`GET /batches/${id}/results: ${reply.status} ${(await reply.text()).slice(0, 300)}`);
  if (!file) {
    for await (const chunk of reply.body as unknown as AsyncIterable<Uint8Array>) options.out(Buffer.from(chunk).toString());
    return 0;
  }
  const out = createWriteStream(file);
  for await (const chunk of reply.body as unknown as AsyncIterable<Uint8Array>) {
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  options.err(`wrote ${file}\n`);
  return 0;
}

const USAGE = 'usage: npm run batch -- submit <file.jsonl> [--endpoint E] [--model M] [--no-follow] | status <id> | results <id> [--out file] | cancel <id> | list';

async function runBatchCli(argv: string[], env: NodeJS.ProcessEnv, io: { out: (text: string) => void; err: (text: string) => void; tty: boolean }): Promise<number> {
  const key = env.GATEWAY_API_KEY;
  const options: Options = { base: (env.GATEWAY_URL || 'http://127.0.0.1:8080/api/v1').replace(/\/$/, ''), key: key ?? '', ...io };
  const [command, ...rest] = argv;
  const flag = (name: string) => {
    const at = rest.indexOf(name);
    if (at < 0) return undefined;
    const value = rest[at + 1];
    if (value === undefined || value.startsWith('--')) throw new CliError(`${name} takes a value`);
    rest.splice(at, 2);
    return value;
  };
  try {
    if (!command || command === '--help' || command === 'help') {
      io.err(`${USAGE}\n`);
      return command ? 0 : 2;
    }
    if (!key) throw new CliError('set GATEWAY_API_KEY to a regular API key (and GATEWAY_URL unless the gateway is npm start on port 8080)');
    switch (command) {
      case 'submit': {
        const endpoint = flag('--endpoint') ?? '/v1/chat/completions';
        const model = flag('--model');
        const follow = !rest.includes('--no-follow');
        const file = rest.find((arg) => !arg.startsWith('--'));
        if (!file) throw new CliError(USAGE);
        return await submit(options, file, { endpoint, ...(model ? { model } : {}), follow });
      }
      case 'status': {
        const batch = await api(options, 'GET', `/batches/${rest[0] ?? ''}?results_limit=1`);
        const { results: _results, results_next: _next, ...shown } = batch;
        io.out(`${JSON.stringify(shown, null, 2)}\n`);
        return 0;
      }
      case 'results': {
        const out = flag('--out');
        return await results(options, rest[0] ?? '', out);
      }
      case 'cancel':
        io.out(`${JSON.stringify(await api(options, 'POST', `/batches/${rest[0] ?? ''}/cancel`))}\n`);
        return 0;
      case 'list': {
        const list = await api(options, 'GET', '/batches?limit=100');
        for (const batch of list.data) io.out(`${batch.id}  ${batch.status.padEnd(11)} ${batch.request_counts.completed + batch.request_counts.failed}/${batch.request_counts.total}  ${new Date(batch.created_at * 1000).toISOString()}\n`);
        return 0;
      }
      default:
        throw new CliError(`unknown command ${command}\n${USAGE}`);
    }
  } catch (err) {
    if (err instanceof CliError) {
      io.err(`${err.message}\n`);
      return 1;
    }
    if (err instanceof TypeError && /fetch failed/.test(err.message)) {
      io.err(`cannot reach ${options.base}: ${String((err as { cause?: unknown }).cause ?? err.message)}\n`);
      return 1;
    }
    throw err;
  }
}

process.exitCode = await runBatchCli(process.argv.slice(2), process.env, {
  out: (text) => { process.stdout.write(text); },
  err: (text) => { process.stderr.write(text); },
  tty: process.stderr.isTTY === true,
});
