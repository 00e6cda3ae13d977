// Sends one generation to one destination, with its secrets opened from the vault for that destination's
// host only, and says how it went: delivered, or failed (and whether trying again could help).
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { withoutSdkLogging } from '../platform/aws/quiet-client.js';
import { joinedConfig, serviceUrl, type FullConfig } from './config.js';
import { isPrivateAddress } from '../platform/public-address.js';
import type { DeliveryMessage } from './event.js';
import type { Destination } from './types.js';
import { send } from './http-send.js';
import { langfuseRequest, otlpRequest, s3ObjectKey, webhookRequest, type OutboundRequest } from './wire-formats.js';

export interface DeliveryOutcome {
  ok: boolean;
  /** The destination's HTTP status, when it answered. */
  status: number | null;
  /** Whether another attempt could succeed (a timeout, a refused connection, 408, 429, 5xx). */
  retryable: boolean;
  error?: string;
  latency_ms: number;
}

export interface DeliverPorts {
  /** The destination's secrets, released for `url` (its host) only. */
  secrets: (destination: Destination, url: string) => Promise<Record<string, unknown>>;
  /** Private and loopback addresses may be reached (npm start); otherwise every resolved address is checked. */
  allowPrivateHosts: boolean;
  /** Sends HTTP deliveries instead of node:http (unit tests). */
  fetch?: typeof fetch;
  now?: () => number;
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 10_000;

function requestFor(destination: Destination, config: FullConfig, message: DeliveryMessage, nowMs: number, event: string): OutboundRequest {
  switch (destination.type) {
    case 'webhook': return webhookRequest(config, message, nowMs, event);
    case 'otel-collector': return otlpRequest(config, message);
    case 'langfuse': return langfuseRequest(config, message, nowMs);
    case 's3': throw new Error('S3 exports are not HTTP requests');
  }
}

const retryableStatus = (status: number) => status === 408 || status === 429 || status >= 500;

type Reply = { status: number; body: string };

async function viaFetch(fetcher: typeof fetch, request: OutboundRequest, timeoutMs: number): Promise<Reply> {
  const response = await fetcher(request.url, { method: request.method, headers: request.headers, body: request.body, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
  return { status: response.status, body: await response.text().catch(() => '') };
}

async function sendHttp(request: OutboundRequest, ports: DeliverPorts): Promise<Omit<DeliveryOutcome, 'latency_ms'>> {
  const timeoutMs = ports.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let reply: Reply;
  try {
    reply = ports.fetch ? await viaFetch(ports.fetch, request, timeoutMs) : await send(request, { timeoutMs, allowPrivateHosts: ports.allowPrivateHosts });
  } catch (err) {
    const error = err as Error & { code?: string; cause?: { code?: string } };
    if (error.name === 'RefusedAddressError') return { ok: false, status: null, retryable: false, error: error.message };
    const code = error.code ?? error.cause?.code;
    return { ok: false, status: null, retryable: true, error: error.name === 'TimeoutError' ? 'timed out' : `not reached${code ? ` (${code})` : ''}` };
  }
  if (reply.status >= 200 && reply.status < 300) {
    // Langfuse answers 207 with the events it refused.
    if (reply.status === 207) {
      const errors = (() => {
        try {
          return (JSON.parse(reply.body) as { errors?: Array<{ status?: number }> }).errors ?? [];
        } catch {
          return [];
        }
      })();
      if (errors.length > 0) return { ok: false, status: 207, retryable: errors.some((entry) => entry.status === undefined || retryableStatus(entry.status)), error: `refused ${errors.length} event(s)` };
    }
    return { ok: true, status: reply.status, retryable: false };
  }
  // The reply's body is not passed on: a destination's answer is the destination's business (and could be
  // anything the host serves).
  return { ok: false, status: reply.status, retryable: retryableStatus(reply.status), error: `answered ${reply.status}` };
}

async function sendS3(config: FullConfig, message: DeliveryMessage, timeoutMs: number): Promise<Omit<DeliveryOutcome, 'latency_ms'>> {
  const endpoint = config.endpoint as string | undefined;
  const client = withoutSdkLogging(new S3Client({
    region: (config.region as string | undefined) ?? 'us-east-1',
    ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
    credentials: { accessKeyId: config.accessKeyId as string, secretAccessKey: config.secretAccessKey as string, ...(config.sessionToken ? { sessionToken: config.sessionToken as string } : {}) },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 1,
  }));
  try {
    // The same key on every attempt: a repeated delivery overwrites the object with the same bytes.
    await client.send(new PutObjectCommand({
      Bucket: config.bucketName as string,
      Key: s3ObjectKey(config, message.generation),
      Body: JSON.stringify(message.generation),
      ContentType: 'application/json',
    }), { abortSignal: AbortSignal.timeout(timeoutMs) });
    return { ok: true, status: 200, retryable: false };
  } catch (err) {
    const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? null;
    if ((err as Error).name === 'AbortError' || (err as Error).name === 'TimeoutError') return { ok: false, status: null, retryable: true, error: 'timed out' };
    return { ok: false, status, retryable: status === null || retryableStatus(status), error: `${(err as Error).name}: ${(err as Error).message}`.slice(0, 300) };
  } finally {
    client.destroy();
  }
}

/** Delivers `message` to `destination` (event: `generation`, or `test` for a connectivity test). */
export async function deliver(destination: Destination, message: DeliveryMessage, ports: DeliverPorts, event = 'generation'): Promise<DeliveryOutcome> {
  const now = ports.now ?? Date.now;
  const started = now();
  let result: Omit<DeliveryOutcome, 'latency_ms'>;
  try {
    const config = joinedConfig(destination.config, await ports.secrets(destination, serviceUrl(destination.type, destination.config as FullConfig)));
    const url = serviceUrl(destination.type, config);
    if (!ports.allowPrivateHosts && destination.type === 's3' && isPrivateAddress(new URL(url).hostname)) throw Object.assign(new Error(`${new URL(url).hostname} is a private or loopback address`), { name: 'RefusedAddressError' });
    result = destination.type === 's3' ? await sendS3(config, message, ports.timeoutMs ?? DEFAULT_TIMEOUT_MS) : await sendHttp(requestFor(destination, config, message, now(), event), ports);
  } catch (err) {
    // The secrets could not be released (the vault refused the host, KMS failed) or the request not built.
    const name = (err as Error).name;
    result = { ok: false, status: null, retryable: name !== 'ReleaseRefused' && name !== 'RefusedAddressError', error: (err as Error).message };
  }
  return { ...result, latency_ms: Math.round(now() - started) };
}
