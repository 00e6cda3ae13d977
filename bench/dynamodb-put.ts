// A probe used in the bench's analysis: how many generation-record PutItems DynamoDB Local takes per second
// on this machine, and what each costs in CPU on both sides (the SDK in Node, the JVM), with no gateway.
// `npx tsx bench/dynamodb-put.ts [--in-memory]`
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { startDynamoDbLocal } from '../bin/local/dynamodb-local.js';
import { ensureTable } from '../lambdas/store/create-table.js';
import { createDocumentClient } from '../lambdas/store/client.js';
import { GenerationRepository, type GenerationRecord } from '../lambdas/store/generation-repository.js';
import { emptyUsage } from '../lambdas/providers/types.js';
import { computeCost } from '../lambdas/inference/cost.js';
import { processCpuMicros } from './children.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const inMemory = process.argv.includes('--in-memory');
const CONNECTIONS = 10;

let n = 0;
function record(): GenerationRecord {
  n += 1;
  return {
    id: `gen-probe-${n}`, org_id: 'org_probe', workspace_id: 'ws_probe', key_hash: 'a'.repeat(64), model: 'simulator/echo',
    provider: 'simulator', upstream_model: 'echo', provider_id: `chatcmpl-${n}`, api: 'chat', streamed: false, status: 'completed',
    finish_reason: 'stop', native_finish_reason: 'stop',
    usage: { ...emptyUsage(), input_tokens: 50, output_tokens: 50 },
    cost: computeCost({ ...emptyUsage(), input_tokens: 50, output_tokens: 50 }, { prompt: 1000n, completion: 2000n, request: 0n, input_cache_read: 1000n, input_cache_write: 1000n, internal_reasoning: 2000n }),
    is_byok: false, service_tier: 'default', attempts: 1, created_at: new Date().toISOString(), latency_ms: 1, first_token_ms: 1,
    generation_time_ms: 0, session_id: null, user_hash: null, error: null,
  };
}

const dir = mkdtempSync(join(tmpdir(), 'dynamodb-put-'));
const ddb = await startDynamoDbLocal(inMemory ? {} : { dataDir: join(dir, 'dynamodb') });
try {
  const admin = new DynamoDBClient({ endpoint: ddb.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  await ensureTable(admin, 'gateway');
  admin.destroy();
  const repo = new GenerationRepository(createDocumentClient({ endpoint: ddb.endpoint, region: 'local' }), 'gateway');
  for (const [phase, total] of [['warm-up', 2000], ['measured', 3000], ['measured', 3000]] as const) {
    const node0 = process.cpuUsage();
    const java0 = processCpuMicros(ddb.process.pid) ?? Number.NaN;
    const started = performance.now();
    let issued = 0;
    await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
      while (issued < total) {
        issued += 1;
        await repo.put(record());
      }
    }));
    const seconds = (performance.now() - started) / 1000;
    const node = process.cpuUsage(node0);
    const java = (processCpuMicros(ddb.process.pid) ?? Number.NaN) - java0;
    console.log(`${inMemory ? 'in-memory' : 'on disk'} ${phase}: ${(total / seconds).toFixed(0)} puts/s with ${CONNECTIONS} in flight; `
      + `Node (SDK) ${((node.user + node.system) / total).toFixed(0)} µs CPU/put, DynamoDB Local ${(java / total).toFixed(0)} µs CPU/put`);
  }
} finally {
  await ddb.stop();
  rmSync(dir, { recursive: true, force: true });
}
