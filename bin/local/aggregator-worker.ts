// The meter aggregator as npm start runs it: in a worker thread (bin/local/aggregator-thread.ts starts it),
// the stream feeder calling the aggregator's Lambda handler, as on AWS a separate function is fed by the
// stream's event source mapping. Its own thread and heap keep its batches and its garbage off the event
// loop that serves requests. Talks to the host thread only through the messages of aggregator-thread.ts.
import { readFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { fileCheckpoints, startStreamFeeder } from './stream-feeder.js';
import { matchesPageFilter, PAGE_STREAM_SETTINGS } from '../../lambdas/billing/page-stream.js';
import { handler } from '../../lambdas/handlers/aggregator.js';
import { defaultAggregatorDeps } from '../../lambdas/app/aggregator-deps.js';
import type { AggregatorWorkerData, FromAggregator, ThreadCpu, ToAggregator } from './aggregator-thread.js';

const port = parentPort;
if (!port) throw new Error('aggregator-worker.ts runs in a worker thread (startAggregatorThread)');
const settings = workerData as AggregatorWorkerData;
const send = (message: FromAggregator) => port.postMessage(message);

/**
 * This thread's CPU time (Linux: /proc/thread-self/stat, in clock ticks, taken to be 10 ms: USER_HZ is 100 on
 * every mainstream Linux build, and Node cannot ask sysconf); undefined elsewhere.
 */
function threadCpu(): ThreadCpu | undefined {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    // pid (comm) state …: fields after the comm, which may hold spaces; utime and stime are the 14th and 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(fields[11]) * 10_000, system: Number(fields[12]) * 10_000 };
  } catch {
    return undefined;
  }
}

try {
  const deps = defaultAggregatorDeps();
  // Every line the handler and the feeder log goes to the host's logger, as the handlers' lines do.
  deps.log.sink = (line) => send({ type: 'log', line });
  // Each page's lag (written → applied), for /health and the bench.
  const aggregator = deps.aggregator;
  const apply = aggregator.apply.bind(aggregator);
  aggregator.apply = async (...args) => {
    const result = await apply(...args);
    if (result.lagsMs.length > 0) send({ type: 'applied', lagsMs: result.lagsMs });
    return result;
  };
  const feeder = startStreamFeeder({
    endpoint: settings.endpoint,
    tableName: settings.tableName,
    handler,
    filter: matchesPageFilter,
    batchSize: PAGE_STREAM_SETTINGS.batchSize,
    batchWindowMs: PAGE_STREAM_SETTINGS.maxBatchingWindowSeconds * 1000,
    retryAttempts: PAGE_STREAM_SETTINGS.retryAttempts,
    pollMs: settings.pollMs,
    checkpoints: fileCheckpoints(settings.checkpointFile),
    deadLetterFile: settings.deadLetterFile,
    log: deps.log,
  });
  port.on('message', (message: ToAggregator) => {
    switch (message.type) {
      case 'drain':
        void feeder.drain({ timeoutMs: message.timeoutMs }).then((drained) => send({ type: 'drained', id: message.id, drained }));
        return;
      case 'cpu':
        send({ type: 'cpu', id: message.id, cpu: threadCpu() });
        return;
      case 'stop':
        void feeder.stop().then(() => {
          send({ type: 'stopped' });
          port.close();
        });
    }
  });
  send({ type: 'ready' });
} catch (error) {
  send({ type: 'failed', error: error instanceof Error ? error.stack ?? error.message : String(error) });
}
