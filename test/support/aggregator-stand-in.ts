// A stand-in for bin/local/aggregator-worker.ts in tests of the process host that runs it: answers as the
// real one does, without DynamoDB; with STAND_IN_EXIT set it says it is ready and then exits with that code,
// and with STAND_IN_READY_MS it takes that long to say it is ready.
import type { FromAggregator, ToAggregator } from '../../bin/local/aggregator-process.js';

const send = (message: FromAggregator) => {
  if (process.connected) process.send!(message);
};
const readyAfter = Number(process.env.STAND_IN_READY_MS ?? 0);
if (readyAfter > 0) await new Promise((resolve) => setTimeout(resolve, readyAfter));
send({ type: 'ready' });
send({ type: 'log', line: 'stand-in started' });
send({ type: 'applied', lagsMs: [12, 34] });
const exitCode = process.env.STAND_IN_EXIT;
if (exitCode) setTimeout(() => process.exit(Number(exitCode)), 20);
process.on('disconnect', () => process.exit(0));
process.on('message', (message: ToAggregator) => {
  if (message.type === 'drain') send({ type: 'drained', id: message.id, drained: message.timeoutMs > 0 });
  if (message.type === 'cpu') send({ type: 'cpu', id: message.id, cpu: { user: 4000, system: 242 } });
  if (message.type === 'stop') {
    send({ type: 'stopped' });
    process.disconnect();
  }
});
