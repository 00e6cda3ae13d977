// DynamoDB's JSON protocol, signed with Signature Version 4 by hand, for the one write on every request's
// path: its page of generation records (billing/page-repository.ts). Measured against DynamoDB Local
// (`npm run bench:pages`), a PutItem of a one-record page costs the gateway about 590 µs of CPU through the
// SDK's document client (endpoint rules, marshalling, serializers, retry and user-agent middleware, its
// signer) and about 240 µs here, encoding the page included; on Lambda a page usually holds one record, so
// that is CPU of every request. Everything else goes through the SDK. What is kept of the SDK: its credential provider (the
// Lambda role's keys, refreshed as they rotate), its region, and its endpoint (a configured one, such as
// DynamoDB Local, or AWS_ENDPOINT_URL_DYNAMODB / AWS_ENDPOINT_URL, or the one its endpoint rules give for the
// region, resolved once). What callers get: the operation's JSON reply, or a DynamoJsonError naming
// DynamoDB's error type (a failed condition is the SDK's ConditionalCheckFailedException, so
// write-failures.ts tells it as for any write). Retried here only: a request whose kept-alive connection
// turns out to be closed (it never reached DynamoDB); the page writer retries a failed page with backoff.
// Not kept of the SDK: its clock-skew correction (a Lambda's clock is NTP-synchronized).
import { createHmac } from 'node:crypto';
import { sha256Hex } from '../sha256.js';
import http from 'node:http';
import https from 'node:https';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';

export interface SigningCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string | undefined;
}

/** What the client takes from an SDK client's resolved configuration. */
export interface JsonClientConfig {
  credentials: () => Promise<SigningCredentials>;
  region: () => Promise<string>;
  /** The endpoint's URL (https://dynamodb.<region>.amazonaws.com/, or DynamoDB Local's). */
  endpoint: () => Promise<URL>;
  /**
   * A request not answered in this long, from the moment it is sent (waiting for a connection included),
   * fails (default 5000 ms; 60 s for an endpoint on this machine: DynamoDB Local).
   */
  timeoutMs?: number;
}

/** A kept-alive connection was closed under the request before any reply: send() tries once more. */
class StaleConnectionError extends Error {
  constructor(readonly reason: Error) {
    super(reason.message);
  }
}

/** DynamoDB refused the request: `type` is its error type (ResourceNotFoundException …), `status` the HTTP status. */
export class DynamoJsonError extends Error {
  constructor(readonly type: string, message: string, readonly status: number) {
    super(message);
    this.name = type;
  }
}

const SERVICE = 'dynamodb';
const CONTENT_TYPE = 'application/x-amz-json-1.0';
const DEFAULT_TIMEOUT_MS = 5000;
/**
 * DynamoDB Local (an endpoint on this machine) may take seconds on a busy machine: a cold JVM just after npm
 * start started it, its stream's backlog being applied. A request timed out there is carried out all the same
 * and sending it again only lengthens its queue, so it is given longer; AWS's endpoints keep DEFAULT_TIMEOUT_MS.
 */
const LOOPBACK_TIMEOUT_MS = 60_000;
const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;
const IDLE_SOCKET_MS = 30_000;

/** The parts of an SDK DynamoDBClient's resolved configuration this client uses. */
interface SdkConfig {
  credentials: () => Promise<SigningCredentials>;
  region: () => Promise<string>;
  isCustomEndpoint?: boolean;
  endpoint?: () => Promise<{ protocol: string; hostname: string; port?: number; path: string }>;
  endpointProvider: (params: Record<string, unknown>) => { url: URL };
  useFipsEndpoint: () => Promise<boolean>;
  useDualstackEndpoint: () => Promise<boolean>;
}

/** The credentials, region and endpoint of an SDK DynamoDB client (or document client). */
export function jsonClientConfigOf(client: { config: unknown }): JsonClientConfig {
  const config = client.config as SdkConfig;
  let endpoint: Promise<URL> | undefined;
  return {
    credentials: () => config.credentials(),
    region: () => config.region(),
    endpoint: () => (endpoint ??= (async () => {
      if (config.isCustomEndpoint && config.endpoint) {
        const { protocol, hostname, port, path } = await config.endpoint();
        return new URL(`${protocol}//${hostname}${port ? `:${port}` : ''}${path || '/'}`);
      }
      // The endpoint the environment configures for every SDK client (LocalStack and the like), as the SDK reads it.
      const configured = process.env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS === 'true' ? undefined : process.env.AWS_ENDPOINT_URL_DYNAMODB || process.env.AWS_ENDPOINT_URL;
      if (configured) return new URL(configured);
      const [region, fips, dualStack] = await Promise.all([config.region(), config.useFipsEndpoint(), config.useDualstackEndpoint()]);
      return new URL(config.endpointProvider({ Region: region, UseFIPS: fips, UseDualStack: dualStack }).url.href);
    })().catch((err: unknown) => {
      endpoint = undefined;
      throw err;
    })),
  };
}

/** `20261124T121625Z` and `20261124` for a time. */
function amzDates(at: Date): { amzDate: string; date: string } {
  const iso = at.toISOString();
  const amzDate = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  return { amzDate, date: amzDate.slice(0, 8) };
}

/**
 * The headers of a signed DynamoDB JSON request (SigV4: the canonical request over content-type, host,
 * x-amz-date, x-amz-security-token when there is one, and x-amz-target, with the body's SHA-256).
 * `keys` caches the day's signing key.
 */
export function signedHeaders(
  request: { host: string; path?: string; target: string; body: string; region: string; credentials: SigningCredentials; at: Date },
  keys: SigningKeyCache = new SigningKeyCache(),
): Record<string, string> {
  const { host, path = '/', target, body, region, credentials, at } = request;
  const { amzDate, date } = amzDates(at);
  const token = credentials.sessionToken;
  const names = token ? 'content-type;host;x-amz-date;x-amz-security-token;x-amz-target' : 'content-type;host;x-amz-date;x-amz-target';
  const canonical = `POST\n${path}\n\ncontent-type:${CONTENT_TYPE}\nhost:${host}\nx-amz-date:${amzDate}\n${token ? `x-amz-security-token:${token}\n` : ''}x-amz-target:${target}\n\n${names}\n${sha256Hex(body)}`;
  const scope = `${date}/${region}/${SERVICE}/aws4_request`;
  const toSign = `AWS4-HMAC-SHA256\n${amzDate}\n${scope}\n${sha256Hex(canonical)}`;
  const signature = createHmac('sha256', keys.key(credentials.secretAccessKey, date, region)).update(toSign, 'utf8').digest('hex');
  return {
    'content-type': CONTENT_TYPE,
    host,
    'x-amz-date': amzDate,
    ...(token ? { 'x-amz-security-token': token } : {}),
    'x-amz-target': target,
    authorization: `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${names}, Signature=${signature}`,
  };
}

/** The signing key of the last secret, day and region used (four HMACs, made once a day per secret). */
export class SigningKeyCache {
  private last: { secret: string; date: string; region: string; key: Buffer } | undefined;

  key(secret: string, date: string, region: string): Buffer {
    const last = this.last;
    if (last && last.secret === secret && last.date === date && last.region === region) return last.key;
    const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();
    const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), SERVICE), 'aws4_request');
    this.last = { secret, date, region, key };
    return key;
  }
}

/** How long a request to `endpoint` may take: the configured time, or DynamoDB Local's or AWS's default. */
export function requestTimeoutMs(config: Pick<JsonClientConfig, 'timeoutMs'>, endpoint: URL): number {
  return config.timeoutMs ?? (LOOPBACK.test(endpoint.hostname) ? LOOPBACK_TIMEOUT_MS : DEFAULT_TIMEOUT_MS);
}

export class DynamoJsonClient {
  // Idle connections are closed after IDLE_SOCKET_MS, before DynamoDB's side would.
  private readonly agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: 64, timeout: IDLE_SOCKET_MS }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: 64, timeout: IDLE_SOCKET_MS }),
  };
  private readonly keys = new SigningKeyCache();

  constructor(private readonly config: JsonClientConfig, private readonly now: () => Date = () => new Date()) {}

  /** Sends one operation (`PutItem` …) with its JSON body; resolves with DynamoDB's JSON reply. */
  async send(operation: string, body: string): Promise<Record<string, unknown>> {
    const [credentials, region, endpoint] = await Promise.all([this.config.credentials(), this.config.region(), this.config.endpoint()]);
    const headers = signedHeaders({ host: endpoint.host, path: endpoint.pathname, target: `DynamoDB_20120810.${operation}`, body, region, credentials, at: this.now() }, this.keys);
    try {
      return await this.post(operation, endpoint, headers, body);
    } catch (err) {
      // A kept-alive connection the other end had closed (idle, or while a Lambda instance was frozen): the
      // request never reached DynamoDB, so it is sent again at once, on a new connection, as the SDK does.
      if (!(err instanceof StaleConnectionError)) throw err;
      return this.post(operation, endpoint, headers, body);
    }
  }

  private post(operation: string, endpoint: URL, headers: Record<string, string>, body: string): Promise<Record<string, unknown>> {
    const secure = endpoint.protocol === 'https:';
    const timeoutMs = requestTimeoutMs(this.config, endpoint);
    return new Promise((resolve, reject) => {
      let settled = false;
      const finish = (error: Error | undefined, reply?: Record<string, unknown>) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        if (error) reject(error);
        else resolve(reply!);
      };
      const request = (secure ? https : http).request({
        protocol: endpoint.protocol,
        // An IPv6 literal's brackets belong to the URL, not to the address.
        hostname: endpoint.hostname.replace(/^\[(.*)\]$/, '$1'),
        port: endpoint.port || (secure ? 443 : 80),
        path: endpoint.pathname,
        method: 'POST',
        agent: this.agents[secure ? 'https:' : 'http:'],
        headers: Object.assign({}, headers, { 'content-length': String(Buffer.byteLength(body)) }),
      }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', (error) => finish(error));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const status = response.statusCode ?? 0;
          let reply: Record<string, unknown> | undefined;
          try {
            reply = text === '' ? {} : JSON.parse(text) as Record<string, unknown>;
          } catch {
            reply = undefined;
          }
          if (status === 200 && reply) finish(undefined, reply);
          else finish(errorOf(status, reply, text));
        });
      });
      // The whole request, waiting for a connection included, has timeoutMs.
      const deadline = setTimeout(() => {
        const error = new Error(`DynamoDB ${operation} not answered within ${timeoutMs} ms`);
        finish(error);
        request.destroy(error);
      }, timeoutMs);
      request.on('error', (error: NodeJS.ErrnoException) => {
        const stale = request.reusedSocket && !settled && (error.code === 'ECONNRESET' || error.code === 'EPIPE');
        finish(stale ? new StaleConnectionError(error) : error);
      });
      request.end(body);
    });
  }

  /** Closes the kept-alive connections. */
  destroy(): void {
    this.agents['http:'].destroy();
    this.agents['https:'].destroy();
  }
}

function errorOf(status: number, reply: Record<string, unknown> | undefined, text: string): Error {
  const type = typeof reply?.__type === 'string' ? reply.__type.slice(reply.__type.lastIndexOf('#') + 1) : `HTTP${status}`;
  const message = String(reply?.message ?? reply?.Message ?? (text.slice(0, 200) || `HTTP ${status}`));
  if (type === 'ConditionalCheckFailedException') return new ConditionalCheckFailedException({ message, $metadata: { httpStatusCode: status } });
  return new DynamoJsonError(type, message, status);
}
