// Bedrock batch inference against npm start's stand-ins: the simulator's model invocation jobs (driven by the
// real @aws-sdk/client-bedrock, through the gateway's client and directly) reading their input from and
// writing their output to the local S3 (s3rver). A job stays Submitted for the simulator's batch delay, then
// answers every record as the live Converse route does; fewer than 100 records fail it, as on Bedrock.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BedrockClient, CreateModelInvocationJobCommand, GetModelInvocationJobCommand } from '@aws-sdk/client-bedrock';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { startSimulator, type Simulator } from '../../bin/simulator/server.js';
import { startLocalS3, type LocalS3 } from '../../bin/local/s3.js';
import { controlPlaneOf, createBedrockBatchApi, recordIdOf } from '../../lambdas/providers/bedrock/bedrock-batch-api.js';
import { ProviderError } from '../../lambdas/providers/provider-error.js';
import type { ProviderBatchApi } from '../../lambdas/providers/batch-api.js';
import type { GenerationRequest } from '../../lambdas/providers/types.js';
import { waitFor } from '../support/wait.js';

const BUCKET = 'gateway-batches';
const ROLE = 'arn:aws:iam::000000000000:role/gateway-bedrock-batch';
const DELAY_MS = 200;
let dir: string;
let s3: LocalS3;
let sim: Simulator;
let api: ProviderBatchApi;
let bedrock: BedrockClient;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bedrock-batches-'));
  s3 = await startLocalS3({ directory: dir, buckets: [BUCKET] });
  sim = await startSimulator({ port: 0, batchDelayMs: DELAY_MS, s3Endpoint: s3.endpoint });
  const endpoint = `${sim.url}/bedrock`;
  api = createBedrockBatchApi({ provider: 'simulator-bedrock-batch', bucket: BUCKET, roleArn: ROLE, s3: s3.client, region: 'us-east-1', endpoint });
  bedrock = new BedrockClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
});

afterAll(async () => {
  bedrock.destroy();
  await sim.close();
  await s3.close();
  rmSync(dir, { recursive: true, force: true });
});

const chat = (text: string, extra: Partial<GenerationRequest> = {}): GenerationRequest => ({ model: 'echo', messages: [{ role: 'user', content: [{ type: 'text', text }] }], max_output_tokens: 64, ...extra });
const lines = (count: number, from = 1) => Array.from({ length: count }, (_, i) => ({ customId: `line-${from + i}`, request: chat(`record ${from + i}`) }));

async function ended(id: string): Promise<string> {
  let status = '';
  await waitFor(async () => (await api.status(id).then((s) => { status = s.status; return s.ended; })), { timeoutMs: 10_000, what: `job ${id} to end` });
  return status;
}

describe('a Bedrock batch inference job', () => {
  it('runs 120 records: the input in S3 in the Converse format, every answer mapped back by record', async () => {
    const submitting = Date.now();
    const id = await api.submit(lines(120), { gateway_batch_id: 'batch_one' });
    expect(id).toMatch(/^arn:aws:bedrock:us-east-1:\d{12}:model-invocation-job\/[a-z0-9]+$/);
    const submitted = await api.status(id);
    // Submitted for the simulator's delay after the submit; a status read later (on a loaded machine) may be past it.
    if (Date.now() - submitting < DELAY_MS) expect(submitted).toEqual({ ended: false, status: 'Submitted' });
    else expect(['Submitted', 'InProgress', 'Completed']).toContain(submitted.status);
    expect(await ended(id)).toBe('Completed');

    // What Bedrock was given: one {recordId, modelInput} line per request, the model named by the job.
    const input = await (await s3.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'batches/batch_one/bedrock/input.jsonl' }))).Body!.transformToString();
    const first = JSON.parse(input.split('\n')[0]!);
    expect(first).toEqual({ recordId: 'L0000000001', modelInput: { messages: [{ role: 'user', content: [{ text: 'record 1' }] }], inferenceConfig: { maxTokens: 64 } } });
    const job = await bedrock.send(new GetModelInvocationJobCommand({ jobIdentifier: id }));
    expect(job).toMatchObject({
      jobName: 'gateway-batch-one', modelId: 'echo', roleArn: ROLE, clientRequestToken: 'batch-one', modelInvocationType: 'Converse', status: 'Completed',
      inputDataConfig: { s3InputDataConfig: { s3Uri: `s3://${BUCKET}/batches/batch_one/bedrock/input.jsonl`, s3InputFormat: 'JSONL' } },
      outputDataConfig: { s3OutputDataConfig: { s3Uri: `s3://${BUCKET}/batches/batch_one/bedrock/output/` } },
      totalRecordCount: 120, processedRecordCount: 120, successRecordCount: 120, errorRecordCount: 0,
    });
    expect(job.submitTime).toBeInstanceOf(Date);

    const results = await api.results(id);
    expect(results.size).toBe(120);
    const one = results.get('line-7');
    expect(one).toEqual({ kind: 'result', result: expect.objectContaining({ text: 'record 7', finish_reason: 'stop', native_finish_reason: 'end_turn' }) });
    expect(one?.kind === 'result' && one.result.usage.input_tokens).toBeGreaterThan(0);
    // And the summary Bedrock writes beside it.
    const jobId = id.slice(id.lastIndexOf('/') + 1);
    const manifest = JSON.parse(await (await s3.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: `batches/batch_one/bedrock/output/${jobId}/manifest.json.out` }))).Body!.transformToString());
    expect(manifest).toMatchObject({ totalRecordCount: 120, processedRecordCount: 120, successRecordCount: 120, errorRecordCount: 0 });
  });

  it('is the same job when submitted again with the same batch (the client request token), and is found by its name', async () => {
    const id = await api.submit(lines(100), { gateway_batch_id: 'batch_twice' });
    expect(await api.submit(lines(100), { gateway_batch_id: 'batch_twice' })).toBe(id);
    expect(await api.find('batch_twice')).toBe(id);
    expect(await api.find('batch_never')).toBeUndefined();
  });

  it('maps a record Bedrock could not run to that item\'s error', async () => {
    const records = [
      ...Array.from({ length: 100 }, (_, i) => ({ recordId: recordIdOf(`line-${i + 1}`), modelInput: { messages: [{ role: 'user', content: [{ text: `ok ${i}` }] }] } })),
      { recordId: recordIdOf('line-101'), modelInput: { messages: [] } },
    ];
    await s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'batches/raw/input.jsonl', Body: records.map((record) => JSON.stringify(record)).join('\n') }));
    const { jobArn } = await bedrock.send(new CreateModelInvocationJobCommand({
      jobName: 'raw-job', roleArn: ROLE, modelId: 'echo', modelInvocationType: 'Converse',
      inputDataConfig: { s3InputDataConfig: { s3Uri: `s3://${BUCKET}/batches/raw/input.jsonl` } }, outputDataConfig: { s3OutputDataConfig: { s3Uri: `s3://${BUCKET}/batches/raw/out` } },
    }));
    expect(await ended(jobArn!)).toBe('PartiallyCompleted');
    const results = await api.results(jobArn!);
    expect(results.get('line-3')).toMatchObject({ kind: 'result', result: { text: 'ok 2' } });
    const failed = results.get('line-101');
    expect(failed?.kind).toBe('error');
    expect(failed?.kind === 'error' && [failed.error.status, failed.error.message]).toEqual([400, 'A conversation must start with a user message.']);
  });

  it('fails a job of fewer than 100 records, as Bedrock does: nothing ran', async () => {
    const id = await api.submit(lines(5), { gateway_batch_id: 'batch_small' });
    expect(await ended(id)).toBe('Failed');
    expect((await bedrock.send(new GetModelInvocationJobCommand({ jobIdentifier: id }))).message).toMatch(/at least 100/);
    expect((await api.results(id)).size).toBe(0);
  });

  it('stops a job before it runs: Stopped with no output; stopping it again is refused', async () => {
    const id = await api.submit(lines(100), { gateway_batch_id: 'batch_stopped' });
    await api.cancel(id);
    expect(await api.status(id)).toEqual({ ended: true, status: 'Stopped' });
    expect((await api.results(id)).size).toBe(0);
    await expect(api.cancel(id)).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/has ended/) });
  });

  it('says which requests its jobs cannot carry though Bedrock takes them live (tools, embeddings), and refuses what live would', () => {
    expect(api.unbatchable!(chat('x', { tools: [{ name: 'f', parameters: { type: 'object' } }] }))).toMatch(/does not take tools/);
    expect(api.unbatchable!({ ...chat('x'), embedding: { input: ['x'] } })).toMatch(/not embeddings/);
    expect(api.unbatchable!(chat('fine'))).toBeUndefined();
    expect(() => api.check(chat('fine'))).not.toThrow();
    expect(() => api.check({ ...chat('x'), messages: [{ role: 'user', content: [{ type: 'audio', data: 'UklGRg==', format: 'xyz' }] }] } as GenerationRequest)).toThrow(ProviderError);
    expect(api.minItems).toBe(100);
  });
});

describe('the control plane a runtime endpoint stands for', () => {
  it('is the endpoint itself off AWS (the simulator), and the region of an AWS runtime endpoint', () => {
    expect(controlPlaneOf('http://127.0.0.1:8081/bedrock', 'us-east-1')).toEqual({ endpoint: 'http://127.0.0.1:8081/bedrock', region: 'us-east-1' });
    expect(controlPlaneOf('https://bedrock-runtime.eu-west-3.amazonaws.com', 'us-east-1')).toEqual({ region: 'eu-west-3' });
    expect(controlPlaneOf('https://vpce-0abc-1234.bedrock-runtime.ap-south-1.vpce.amazonaws.com', undefined)).toEqual({ region: 'ap-south-1' });
    expect(controlPlaneOf(undefined, 'us-west-2')).toEqual({ region: 'us-west-2' });
    expect(controlPlaneOf(undefined, undefined)).toEqual({});
  });
});
