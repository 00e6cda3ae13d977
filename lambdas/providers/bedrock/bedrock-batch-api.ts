// Amazon Bedrock batch inference (CreateModelInvocationJob) as a provider batch service: the requests go as
// a JSON Lines file in S3 (one `{recordId, modelInput}` per request, modelInput in the Converse format, made
// by the live adapter's converter), a job reads it and writes `{recordId, modelOutput | error}` lines to
// `<output prefix>/<job id>/input.jsonl.out`, and each modelOutput (a Converse response) comes back as the
// internal result the live adapter would have given.
//
// The job reads and writes the gateway's batch bucket under batches/<batch id>/bedrock/, through a service
// role Bedrock assumes (GATEWAY_BEDROCK_BATCH_ROLE_ARN; the CDK stack makes it). The job's client request
// token is the gateway's batch id, so a submission repeated after a crash is the same job, not a second one.
import * as z from 'zod';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { BedrockClient } from '@aws-sdk/client-bedrock';
import { ProviderError } from '../provider-error.js';
import { parseUpstream } from '../http.js';
import { bodyLines } from '../json-lines.js';
import type { GenerationRequest } from '../types.js';
import type { ProviderBatchApi, ProviderBatchOutcome } from '../batch-api.js';
import { convertToBedrockConverse } from './convert-to-bedrock-converse.js';
import { converseResponseSchema } from './bedrock-converse-api-types.js';
import { EXCEPTION_STATUS, bedrockError, converseResult } from './bedrock-results.js';
import { isLocalFake, LOCAL_FAKE_CREDENTIALS } from './local-fake.js';
import { withoutSdkLogging } from '../../platform/aws/quiet-client.js';

/** Bedrock's quota: a batch inference job takes at least this many records (fewer run live, through the gateway). */
export const BEDROCK_BATCH_MIN_RECORDS = 100;

export interface BedrockBatchSettings {
  provider: string;
  /** The bucket the job reads its input from and writes its output to (the gateway's batch bucket). */
  bucket: string;
  /** The service role Bedrock assumes to read and write it. */
  roleArn: string;
  s3: S3Client;
  /** AWS region; the SDK's default (AWS_REGION) when omitted. */
  region?: string | undefined;
  /**
   * The catalog endpoint's base_url (the runtime's endpoint): the control plane's too where it is not AWS's (the
   * simulator serves both); an AWS runtime endpoint (bedrock-runtime.<region>.amazonaws.com …) names only
   * the region, whose control plane the SDK then finds.
   */
  endpoint?: string | undefined;
  /** A ready client (tests); otherwise one is created on first use. */
  client?: BedrockClient;
}

/** Job states after which no record runs any more. */
const ENDED = new Set(['Completed', 'PartiallyCompleted', 'Failed', 'Stopped', 'Expired']);

const outputLineSchema = z.object({
  recordId: z.string(),
  modelOutput: z.unknown().optional(),
  error: z.object({ errorCode: z.union([z.number(), z.string()]).nullish(), errorMessage: z.string().nullish() }).nullish(),
});

/** A record's id (Bedrock's examples are 11 alphanumeric characters): `line-<n>` → `L` and n in ten digits. */
export function recordIdOf(customId: string): string {
  const match = /^line-(\d{1,10})$/.exec(customId);
  if (!match) throw new Error(`a Bedrock batch record is named after its line (line-<n>), not "${customId}"`);
  return `L${match[1]!.padStart(10, '0')}`;
}

function customIdOf(recordId: string): string | undefined {
  const match = /^L(\d{10})$/.exec(recordId);
  return match ? `line-${Number(match[1])}` : undefined;
}

/** A Converse request as the job's modelInput: no modelId (the job names the model), bytes as base64 as on the wire. */
function modelInput(request: GenerationRequest, provider: string): string {
  const { modelId: _model, ...input } = convertToBedrockConverse(request, provider);
  return JSON.stringify(input, (_key, value: unknown) => (value instanceof Uint8Array ? Buffer.from(value).toString('base64') : value));
}

/** `s3://bucket/key` → its bucket and key. */
function s3Location(uri: string): { bucket: string; key: string } {
  const match = /^s3:\/\/([^/]+)\/?(.*)$/.exec(uri);
  if (!match) throw new Error(`not an S3 URI: ${uri}`);
  return { bucket: match[1]!, key: match[2]! };
}

/** Job names and client request tokens take letters, digits and inner hyphens. */
const tokenOf = (gatewayBatchId: string) => gatewayBatchId.replace(/[^a-zA-Z0-9]+/g, '-').replace(/^-+|-+$/g, '');
/** The job's name: found again by it (find()). */
const jobNameOf = (gatewayBatchId: string) => `gateway-${tokenOf(gatewayBatchId)}`.slice(0, 63);

/** Where the control plane is, for a runtime endpoint: its own URL off AWS, else the region of AWS's. */
export function controlPlaneOf(runtimeEndpoint: string | undefined, region: string | undefined): { endpoint?: string; region?: string } {
  if (!runtimeEndpoint) return region ? { region } : {};
  const host = new URL(runtimeEndpoint).hostname;
  if (!host.endsWith('.amazonaws.com') && !host.endsWith('.amazonaws.com.cn')) return { endpoint: runtimeEndpoint, ...(region ? { region } : {}) };
  const named = /bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.(?:vpce\.)?amazonaws\.com/.exec(host)?.[1];
  return named ?? region ? { region: named ?? region! } : {};
}

export function createBedrockBatchApi(settings: BedrockBatchSettings): ProviderBatchApi {
  const { provider, bucket, s3 } = settings;
  let client: Promise<{ sdk: typeof import('@aws-sdk/client-bedrock'); client: BedrockClient }> | undefined;
  // Loaded on first use: only the batch steps need the control plane's client.
  const control = () => client ??= import('@aws-sdk/client-bedrock').then((sdk) => ({
    sdk,
    client: settings.client ?? withoutSdkLogging(new sdk.BedrockClient({ ...controlPlaneOf(settings.endpoint, settings.region), ...(isLocalFake(settings.endpoint) ? { credentials: LOCAL_FAKE_CREDENTIALS } : {}), maxAttempts: 3 })),
  }));
  const send = async <T>(make: (sdk: typeof import('@aws-sdk/client-bedrock')) => unknown): Promise<T> => {
    const { sdk, client: bedrock } = await control();
    try {
      return await bedrock.send(make(sdk) as never) as T;
    } catch (err) {
      throw bedrockError(provider, err);
    }
  };
  const job = (id: string) => send<{ status?: string; message?: string; outputDataConfig?: { s3OutputDataConfig?: { s3Uri?: string } } }>((sdk) => new sdk.GetModelInvocationJobCommand({ jobIdentifier: id }));

  return {
    kind: 'bedrock',
    minItems: BEDROCK_BATCH_MIN_RECORDS,

    check(request) {
      convertToBedrockConverse(request, provider);
    },

    unbatchable(request) {
      if (request.embedding) return 'Bedrock batch inference runs chat requests here, not embeddings';
      if (request.tools?.length) return 'Bedrock batch inference in the Converse format does not take tools';
      return undefined;
    },

    async submit(lines, metadata) {
      const batchId = metadata.gateway_batch_id ?? '';
      // Beside the batch's own objects (batches/<id>/…): kept and expired with them, readable by the role.
      const prefix = `batches/${batchId}/bedrock/`;
      const body = lines.map(({ customId, request }) => `{"recordId":${JSON.stringify(recordIdOf(customId))},"modelInput":${modelInput(request, provider)}}`).join('\n');
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}input.jsonl`, Body: `${body}\n`, ContentType: 'application/jsonl' }));
      const created = await send<{ jobArn?: string }>((sdk) => new sdk.CreateModelInvocationJobCommand({
        jobName: jobNameOf(batchId),
        roleArn: settings.roleArn,
        // The same token is the same job: a retry after a crash between this call and storing its answer.
        clientRequestToken: tokenOf(batchId) || undefined,
        modelId: lines[0]!.request.model,
        modelInvocationType: 'Converse',
        inputDataConfig: { s3InputDataConfig: { s3Uri: `s3://${bucket}/${prefix}input.jsonl`, s3InputFormat: 'JSONL' } },
        outputDataConfig: { s3OutputDataConfig: { s3Uri: `s3://${bucket}/${prefix}output/` } },
        timeoutDurationInHours: 24,
      }));
      if (!created.jobArn) throw new ProviderError({ provider, kind: 'invalid-response', status: 502, message: 'Bedrock created a batch inference job without an ARN' });
      return created.jobArn;
    },

    async find(gatewayBatchId) {
      const name = jobNameOf(gatewayBatchId);
      const listed = await send<{ invocationJobSummaries?: Array<{ jobArn?: string; jobName?: string }> }>((sdk) => new sdk.ListModelInvocationJobsCommand({ nameContains: name, maxResults: 10 }));
      return listed.invocationJobSummaries?.find((summary) => summary.jobName === name)?.jobArn;
    },

    async status(id) {
      const { status = 'Submitted' } = await job(id);
      return { ended: ENDED.has(status), status };
    },

    async results(id) {
      const described = await job(id);
      const outcomes = new Map<string, ProviderBatchOutcome>();
      const uri = described.outputDataConfig?.s3OutputDataConfig?.s3Uri;
      if (!uri) return outcomes;
      const out = s3Location(uri);
      const jobId = id.slice(id.lastIndexOf('/') + 1);
      let body: AsyncIterable<Uint8Array>;
      try {
        const object = await s3.send(new GetObjectCommand({ Bucket: out.bucket, Key: `${out.key.replace(/\/?$/, '/')}${jobId}/input.jsonl.out` }));
        body = object.Body as AsyncIterable<Uint8Array>;
      } catch (err) {
        // No output at all: the job ran no record (stopped, expired or failed before any).
        if ((err as { name?: string }).name === 'NoSuchKey') return outcomes;
        throw err;
      }
      // Line by line as it arrives: each line repeats its request (modelInput), the file is never held whole.
      for await (const raw of bodyLines(body)) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(raw);
        } catch {
          throw new ProviderError({ provider, kind: 'invalid-response', status: 502, message: 'Bedrock\'s batch output has a line that is not JSON' });
        }
        const line = parseUpstream(provider, outputLineSchema, parsed);
        const customId = customIdOf(line.recordId);
        if (!customId) continue;
        if (line.modelOutput !== undefined && !line.error) {
          outcomes.set(customId, { kind: 'result', result: converseResult(parseUpstream(provider, converseResponseSchema, line.modelOutput), false) });
        } else {
          // An HTTP status, or an exception's name (ValidationException …).
          const raw = line.error?.errorCode;
          const code = Number(raw);
          const status = Number.isInteger(code) && code >= 400 && code < 600 ? code : (typeof raw === 'string' ? EXCEPTION_STATUS[raw] : undefined) ?? 500;
          outcomes.set(customId, { kind: 'error', error: new ProviderError({ provider, kind: 'http', status, message: line.error?.errorMessage || `Bedrock could not run this record (${line.error?.errorCode ?? 'no code'})` }) });
        }
      }
      return outcomes;
    },

    async cancel(id) {
      await send((sdk) => new sdk.StopModelInvocationJobCommand({ jobIdentifier: id }));
    },
  };
}
