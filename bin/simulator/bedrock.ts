// Amazon Bedrock under /bedrock (a Bedrock client's endpoint is <simulator>/bedrock):
//   Runtime:       POST /bedrock/model/{modelId}/converse (a Converse response; ConverseStream is not simulated);
//   Control plane: POST /bedrock/model-invocation-job, GET /bedrock/model-invocation-job/{arn},
//                  POST /bedrock/model-invocation-job/{arn}/stop, GET /bedrock/model-invocation-jobs.
// A batch inference job reads its JSON Lines input from S3 (the local stand-in at S3_ENDPOINT, as read when
// the job runs), stays Submitted for `delayMs`, then answers every record as the live Converse route would
// and writes `<output>/<job id>/<input file>.out` and `manifest.json.out`, as Bedrock does. As on Bedrock, a
// job of fewer than 100 records fails, and the client request token makes a repeated create the same job.
// Jobs are kept in memory: a restarted simulator knows none.
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { createS3Client } from '../../lambdas/platform/aws/s3.js';
import { bufferedAnswer, type BatchReply } from './batches.js';
import {
  contentText, isObject, jsonBody, newId, readLimit, upstreamName,
  type ErrorKind, type ErrorReply, type Reply, type WireFormat,
} from './common.js';

const TEXT_BLOCKS: ReadonlySet<string> = new Set<string>();
/** Bedrock's quota: records a batch inference job takes at least. */
const MIN_RECORDS = 100;
const ACCOUNT = '000000000000';
const REGION = 'us-east-1';

const exception = (status: number, type: string, message: string): ErrorReply => ({ status, body: { __type: type, message } });

function error(kind: ErrorKind, message: string, model?: string): ErrorReply {
  switch (kind) {
    case 'invalid': return exception(400, 'ValidationException', message);
    case 'not_found': return exception(404, 'ResourceNotFoundException', `The provided model identifier is invalid: ${model ?? ''}`);
    case 'rate_limit': return exception(429, 'ThrottlingException', message || 'Too many requests, please wait before trying again.');
    case 'server': return exception(500, 'InternalServerException', message || 'The server encountered an internal error.');
  }
}

function stopReason(reply: Reply): string {
  return reply.kind === 'tool' ? 'tool_use' : reply.truncated ? 'max_tokens' : 'end_turn';
}

/** Converse: the model from the path, messages of content blocks, the system prompt as text blocks. */
export const bedrockConverse: WireFormat = {
  streamContentType: 'application/vnd.amazon.eventstream',

  parse(body, pathModel) {
    if (!isObject(body)) return 'The request body must be a JSON object.';
    const model = pathModel ?? '';
    if (!Array.isArray(body.messages) || body.messages.length === 0) return 'A conversation must start with a user message.';
    let maxTokens: number | undefined | null;
    if (isObject(body.inferenceConfig)) maxTokens = readLimit(body.inferenceConfig.maxTokens);
    if (maxTokens === null) return 'inferenceConfig.maxTokens: must be a positive integer';
    let inputChars = Array.isArray(body.system) ? contentText(body.system, TEXT_BLOCKS).length : 0;
    let lastUserText = '';
    for (const message of body.messages) {
      if (!isObject(message) || (message.role !== 'user' && message.role !== 'assistant') || !Array.isArray(message.content)) return 'messages: each message needs a role of user or assistant and a list of content blocks';
      const text = contentText(message.content, TEXT_BLOCKS);
      inputChars += text.length;
      if (message.role === 'user') lastUserText = text;
    }
    let toolName: string | undefined;
    const tools = isObject(body.toolConfig) ? body.toolConfig.tools : undefined;
    if (Array.isArray(tools)) {
      for (const tool of tools) {
        if (isObject(tool) && isObject(tool.toolSpec) && typeof tool.toolSpec.name === 'string') {
          toolName = tool.toolSpec.name;
          break;
        }
      }
    }
    return { model, upstream: upstreamName(model), stream: false, lastUserText, inputChars, maxTokens, toolName };
  },

  error,

  render(request, reply) {
    const content = reply.kind === 'tool'
      ? [{ toolUse: { toolUseId: newId('tooluse_'), name: reply.name, input: { echo: request.lastUserText } } }]
      : [{ text: reply.text }];
    return {
      output: { message: { role: 'assistant', content } },
      stopReason: stopReason(reply),
      usage: { inputTokens: reply.inputTokens, outputTokens: reply.outputTokens, totalTokens: reply.inputTokens + reply.outputTokens },
      metrics: { latencyMs: 1 },
    };
  },

  frames() {
    return [];
  },
};

export const BEDROCK_CONVERSE_PATH = /^\/bedrock\/model\/([^/]+)\/(converse|converse-stream)$/;

type JobStatus = 'Submitted' | 'InProgress' | 'Completed' | 'PartiallyCompleted' | 'Failed' | 'Stopping' | 'Stopped';

interface Job {
  jobArn: string;
  jobName: string;
  modelId: string;
  roleArn: string;
  clientRequestToken: string | undefined;
  status: JobStatus;
  message: string | undefined;
  submitTime: number;
  lastModifiedTime: number;
  endTime: number | undefined;
  inputDataConfig: { s3InputDataConfig: { s3Uri: string; s3InputFormat?: string } };
  outputDataConfig: { s3OutputDataConfig: { s3Uri: string } };
  timeoutDurationInHours: number;
  modelInvocationType: string;
  totalRecordCount: number | undefined;
  processedRecordCount: number | undefined;
  successRecordCount: number | undefined;
  errorRecordCount: number | undefined;
  timer: NodeJS.Timeout | undefined;
}

const ENDED: ReadonlySet<JobStatus> = new Set(['Completed', 'PartiallyCompleted', 'Failed', 'Stopped']);

function s3Location(uri: string): { bucket: string; key: string } | undefined {
  const match = /^s3:\/\/([^/]+)\/(.*)$/.exec(uri);
  return match ? { bucket: match[1]!, key: match[2]! } : undefined;
}

const iso = (ms: number) => new Date(ms).toISOString();

export class SimulatedBedrockBatches {
  private readonly jobs = new Map<string, Job>();
  private s3: S3Client | undefined;

  /** `s3Endpoint`: where the S3 stand-in is when a job runs (default: S3_ENDPOINT then). */
  constructor(private readonly delayMs: number, private readonly s3Endpoint: () => string | undefined = () => process.env.S3_ENDPOINT) {}

  /** Jobs not yet run stay unrun (the simulator is closing). */
  close(): void {
    for (const job of this.jobs.values()) clearTimeout(job.timer);
    this.s3?.destroy();
  }

  static handles(path: string): boolean {
    return path === '/bedrock/model-invocation-job' || path.startsWith('/bedrock/model-invocation-job/') || path === '/bedrock/model-invocation-jobs';
  }

  async handle(method: string, path: string, query: string, raw: Buffer): Promise<BatchReply> {
    const parts = path.split('/').filter(Boolean).map((part) => decodeURIComponent(part));
    if (path === '/bedrock/model-invocation-job' && method === 'POST') return this.create(raw);
    if (path === '/bedrock/model-invocation-jobs' && method === 'GET') return this.list(new URLSearchParams(query));
    if (parts[1] === 'model-invocation-job' && parts.length === 3 && method === 'GET') return this.read(parts[2]!);
    if (parts[1] === 'model-invocation-job' && parts.length === 4 && parts[3] === 'stop' && method === 'POST') return this.stop(parts[2]!);
    return exception(404, 'UnknownOperationException', `Unknown operation: ${method} ${path}`);
  }

  private create(raw: Buffer): BatchReply {
    const parsed = jsonBody(raw);
    if (!parsed) return exception(400, 'ValidationException', 'The request body is not valid JSON.');
    const body = parsed.value;
    if (!isObject(body)) return exception(400, 'ValidationException', 'The request body must be a JSON object.');
    const { jobName, roleArn, modelId, clientRequestToken } = body;
    const input = isObject(body.inputDataConfig) && isObject(body.inputDataConfig.s3InputDataConfig) ? body.inputDataConfig.s3InputDataConfig : undefined;
    const output = isObject(body.outputDataConfig) && isObject(body.outputDataConfig.s3OutputDataConfig) ? body.outputDataConfig.s3OutputDataConfig : undefined;
    if (typeof jobName !== 'string' || !/^[a-zA-Z0-9](-*[a-zA-Z0-9+\-.])*$/.test(jobName) || jobName.length > 63) return exception(400, 'ValidationException', '1 validation error detected: Value at \'jobName\' failed to satisfy constraint');
    if (typeof roleArn !== 'string' || !roleArn.startsWith('arn:')) return exception(400, 'ValidationException', 'roleArn: a role ARN is required');
    if (typeof modelId !== 'string' || modelId === '') return exception(400, 'ValidationException', 'modelId: a model identifier is required');
    if (!input || typeof input.s3Uri !== 'string' || !s3Location(input.s3Uri)) return exception(400, 'ValidationException', 'inputDataConfig.s3InputDataConfig.s3Uri: an s3:// URI is required');
    if (!output || typeof output.s3Uri !== 'string' || !s3Location(output.s3Uri)) return exception(400, 'ValidationException', 'outputDataConfig.s3OutputDataConfig.s3Uri: an s3:// URI is required');
    const token = typeof clientRequestToken === 'string' ? clientRequestToken : undefined;
    if (token) {
      const same = [...this.jobs.values()].find((job) => job.clientRequestToken === token);
      if (same) return { status: 200, body: { jobArn: same.jobArn } };
    }
    if ([...this.jobs.values()].some((job) => job.jobName === jobName)) return exception(400, 'ConflictException', `A job named ${jobName} already exists.`);
    const now = Date.now();
    const job: Job = {
      jobArn: `arn:aws:bedrock:${REGION}:${ACCOUNT}:model-invocation-job/${newId('').toLowerCase()}`,
      jobName, modelId, roleArn, clientRequestToken: token, status: 'Submitted', message: undefined, submitTime: now, lastModifiedTime: now, endTime: undefined,
      inputDataConfig: { s3InputDataConfig: { s3Uri: input.s3Uri, ...(typeof input.s3InputFormat === 'string' ? { s3InputFormat: input.s3InputFormat } : {}) } },
      outputDataConfig: { s3OutputDataConfig: { s3Uri: output.s3Uri } },
      timeoutDurationInHours: typeof body.timeoutDurationInHours === 'number' ? body.timeoutDurationInHours : 24,
      modelInvocationType: typeof body.modelInvocationType === 'string' ? body.modelInvocationType : 'InvokeModel',
      totalRecordCount: undefined, processedRecordCount: undefined, successRecordCount: undefined, errorRecordCount: undefined, timer: undefined,
    };
    job.timer = setTimeout(() => { void this.run(job); }, this.delayMs);
    job.timer.unref();
    this.jobs.set(job.jobArn, job);
    return { status: 200, body: { jobArn: job.jobArn } };
  }

  private view(job: Job) {
    const { timer: _timer, submitTime, lastModifiedTime, endTime, ...rest } = job;
    return {
      ...rest, submitTime: iso(submitTime), lastModifiedTime: iso(lastModifiedTime), ...(endTime !== undefined ? { endTime: iso(endTime) } : {}),
      jobExpirationTime: iso(submitTime + job.timeoutDurationInHours * 3_600_000),
    };
  }

  private find(id: string): Job | undefined {
    return this.jobs.get(id) ?? [...this.jobs.values()].find((job) => job.jobArn.endsWith(`/${id}`));
  }

  private read(id: string): BatchReply {
    const job = this.find(id);
    return job ? { status: 200, body: this.view(job) } : exception(404, 'ResourceNotFoundException', `Could not find job ${id}`);
  }

  private list(query: URLSearchParams): BatchReply {
    const contains = query.get('nameContains') ?? '';
    const max = Math.min(1000, Number(query.get('maxResults') ?? 1000) || 1000);
    const summaries = [...this.jobs.values()].reverse().filter((job) => job.jobName.includes(contains)).slice(0, max).map((job) => this.view(job));
    return { status: 200, body: { invocationJobSummaries: summaries } };
  }

  private stop(id: string): BatchReply {
    const job = this.find(id);
    if (!job) return exception(404, 'ResourceNotFoundException', `Could not find job ${id}`);
    if (ENDED.has(job.status)) return exception(400, 'ValidationException', `The job ${job.jobArn} has ended (${job.status}) and cannot be stopped.`);
    if (job.status === 'Submitted') {
      clearTimeout(job.timer);
      this.end(job, 'Stopped');
    } else job.status = 'Stopping';
    return { status: 200, body: {} };
  }

  private end(job: Job, status: JobStatus, message?: string): void {
    job.status = status;
    job.message = message;
    job.endTime = job.lastModifiedTime = Date.now();
  }

  /** The job's time has come: every record answered into the output file, unless it was stopped meanwhile. */
  private async run(job: Job): Promise<void> {
    if (job.status !== 'Submitted') return;
    job.status = 'InProgress';
    job.lastModifiedTime = Date.now();
    try {
      const endpoint = this.s3Endpoint();
      if (!endpoint) throw new Error('the simulator has no S3 to read the input from (S3_ENDPOINT)');
      this.s3 ??= createS3Client({ endpoint });
      const input = s3Location(job.inputDataConfig.s3InputDataConfig.s3Uri)!;
      let text: string;
      try {
        text = await (await this.s3.send(new GetObjectCommand({ Bucket: input.bucket, Key: input.key }))).Body!.transformToString('utf8');
      } catch (err) {
        this.end(job, 'Failed', `The input ${job.inputDataConfig.s3InputDataConfig.s3Uri} could not be read: ${(err as Error).name}`);
        return;
      }
      const records = text.split('\n').filter((line) => line.trim() !== '');
      job.totalRecordCount = records.length;
      if (records.length < MIN_RECORDS) {
        this.end(job, 'Failed', `The job has ${records.length} records; a batch inference job takes at least ${MIN_RECORDS}.`);
        return;
      }
      let success = 0;
      let failed = 0;
      let inputTokens = 0;
      let outputTokens = 0;
      const lines = records.map((record) => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(record);
        } catch {
          parsed = undefined;
        }
        const recordId = isObject(parsed) && typeof parsed.recordId === 'string' ? parsed.recordId : newId('');
        const modelInput = isObject(parsed) ? parsed.modelInput : undefined;
        const reply = job.modelInvocationType === 'Converse' && isObject(modelInput)
          ? bufferedAnswer({ ...bedrockConverse, parse: (body, _model, stream) => bedrockConverse.parse(body, job.modelId, stream) }, modelInput)
          : { status: 400, body: { message: job.modelInvocationType === 'Converse' ? 'modelInput must be a Converse request' : 'The simulator runs Converse jobs only' } };
        if (reply.status === 200) {
          success += 1;
          const usage = (reply.body as { usage: { inputTokens: number; outputTokens: number } }).usage;
          inputTokens += usage.inputTokens;
          outputTokens += usage.outputTokens;
          return JSON.stringify({ recordId, modelInput, modelOutput: reply.body });
        }
        failed += 1;
        return JSON.stringify({ recordId, modelInput, error: { errorCode: reply.status, errorMessage: (reply.body as { message?: string }).message ?? 'failed' } });
      });
      // Stopped while it ran (stop() runs between this job's awaits).
      if ((job.status as JobStatus) === 'Stopping') {
        this.end(job, 'Stopped');
        return;
      }
      const output = s3Location(job.outputDataConfig.s3OutputDataConfig.s3Uri)!;
      const folder = `${output.key.replace(/\/?$/, '/')}${job.jobArn.slice(job.jobArn.lastIndexOf('/') + 1)}/`;
      const inputName = input.key.slice(input.key.lastIndexOf('/') + 1);
      await this.s3.send(new PutObjectCommand({ Bucket: output.bucket, Key: `${folder}${inputName}.out`, Body: `${lines.join('\n')}\n` }));
      await this.s3.send(new PutObjectCommand({
        Bucket: output.bucket, Key: `${folder}manifest.json.out`,
        Body: JSON.stringify({ totalRecordCount: records.length, processedRecordCount: records.length, successRecordCount: success, errorRecordCount: failed, inputTokenCount: inputTokens, outputTokenCount: outputTokens }),
      }));
      Object.assign(job, { processedRecordCount: records.length, successRecordCount: success, errorRecordCount: failed });
      this.end(job, failed === 0 ? 'Completed' : 'PartiallyCompleted');
    } catch (err) {
      this.end(job, 'Failed', `The job failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
