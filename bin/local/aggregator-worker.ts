// The meter aggregator as npm start runs it: in a process of its own (bin/local/aggregator-process.ts starts
// it), the stream feeder calling the aggregator's Lambda handler, as on AWS a separate function is fed by the
// stream's event source mapping. Its own process and heap keep its batches and its garbage off the event
// loop that serves requests, and its memory off the gateway's. Talks to its host only through the messages
// of aggregator-process.ts; exits when its host goes.
import { fileCheckpoints, startStreamFeeder } from './stream-feeder.js';
import { matchesPageFilter, PAGE_STREAM_SETTINGS } from '../../lambdas/billing/page-stream.js';
import { handler } from '../../lambdas/handlers/aggregator.js';
import { defaultAggregatorDeps } from '../../lambdas/app/aggregator-deps.js';
import type { AggregatorWorkerData, FromAggregator, ThreadCpu, ToAggregator } from './aggregator-process.js';

if (!process.send) throw new Error('aggregator-worker.ts runs as a child process of npm start (startAggregatorProcess)');
const settings = JSON.parse(process.env.AGGREGATOR_WORKER_DATA ?? '{}') as AggregatorWorkerData;
const send = (message: FromAggregator) => {
  if (process.connected) process.send!(message);
};
// Signals are the host's to handle (Ctrl-C reaches the whole process group): it says when to stop.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => undefined);

/** This process's CPU time so far, µs. */
function processCpu(): ThreadCpu {
  const { user, system } = process.cpuUsage();
  return { user, system };
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
  let stopping: Promise<void> | undefined;
  const stop = () => stopping ??= feeder.stop().then(() => {
    // Exits once the answer (and every log line before it) is on its way.
    if (process.connected) process.send!({ type: 'stopped' } satisfies FromAggregator, () => process.exit(0));
    else process.exit(0);
  });
  // The host went (it exited, was killed, crashed): stop reading the stream (the checkpoints say where the next
  // run begins); a stop that hangs does not leave this process behind.
  process.on('disconnect', () => {
    setTimeout(() => process.exit(1), 10_000).unref();
    void stop();
  });
  process.on('message', (message: ToAggregator) => {
    switch (message.type) {
      case 'drain':
        void feeder.drain({ timeoutMs: message.timeoutMs }).then((drained) => send({ type: 'drained', id: message.id, drained }));
        return;
      case 'cpu':
        send({ type: 'cpu', id: message.id, cpu: processCpu() });
        return;
      case 'stop':
        void stop();
    }
  });
  send({ type: 'ready' });
} catch (error) {
  send({ type: 'failed', error: error instanceof Error ? error.stack ?? error.message : String(error) });
}
