// `npm run simulator`: the upstream simulator on its own (OpenAI, Anthropic and Gemini wire formats).
// SIMULATOR_PORT (default PORT + 1, i.e. 8081), SIMULATOR_CHUNK_DELAY_MS, SIMULATOR_FIRST_BYTE_DELAY_MS,
// SIMULATOR_BATCH_DELAY_MS (how long a provider batch stays in progress, default 1000).
import { DEFAULT_SIMULATOR_BATCH_DELAY_MS, startSimulator } from './simulator/server.js';

function intFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    console.error(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`);
    process.exit(1);
  }
  return value;
}

const port = intFromEnv('SIMULATOR_PORT', intFromEnv('PORT', 8080) + 1);
const chunkDelayMs = intFromEnv('SIMULATOR_CHUNK_DELAY_MS', 0);
const firstByteDelayMs = intFromEnv('SIMULATOR_FIRST_BYTE_DELAY_MS', 0);
const batchDelayMs = intFromEnv('SIMULATOR_BATCH_DELAY_MS', DEFAULT_SIMULATOR_BATCH_DELAY_MS);

startSimulator({ port, chunkDelayMs, firstByteDelayMs, batchDelayMs }).then((simulator) => {
  console.log(`Upstream simulator listening on ${simulator.url}`);
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    simulator.close().then(() => process.exit(0), (err: unknown) => {
      console.error(err);
      process.exit(1);
    });
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}, (err: unknown) => {
  console.error(`Upstream simulator failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
