// The local HTTP server: turns each request into the Function URL / API Gateway v2 event the Lambda
// handlers get on AWS, picks the function from the route table, and hands streaming handlers the
// ServerResponse itself as their response stream.
import { isUtf8 } from 'node:buffer';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { createRouter } from '../../lambdas/platform/http/router.js';
import { routes } from '../../lambdas/app/routes.js';
import { CORS_ALLOWED_HEADERS } from '../../lambdas/platform/http/cors.js';
import { DEFAULT_MAX_BODY_BYTES, type LambdaFunction, type RouteDef } from '../../lambdas/platform/http/route.js';
import { HttpError, PayloadTooLargeError, toErrorReply, BadRequestError, ServiceUnavailableError } from '../../lambdas/platform/http/errors.js';
import { Logger } from '../../lambdas/platform/logger.js';
import { performance } from 'node:perf_hooks';

export type BufferedHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
export type StreamingHandler = (event: APIGatewayProxyEventV2, responseStream: ServerResponse, context: Context) => Promise<void>;

export interface LocalServerOptions {
  port: number;
  host?: string;
  handlers: { inference: StreamingHandler; management: BufferedHandler };
  /** Largest body the server reads before answering 413 itself; routes may set lower limits. */
  maxBodyBytes?: number;
  timeoutMs?: number;
  log?: (line: string) => void;
  /** Told about each request once its handler has finished (the local access log). */
  onRequestDone?: (done: RequestDone) => void;
  /** Connection limits and timeouts against slow or abusive clients; defaults in DEFAULT_SERVER_LIMITS. */
  limits?: Partial<ServerLimits>;
}

export interface RequestDone {
  method: string;
  path: string;
  status: number;
  ms: number;
  requestId: string;
  /** The inference reply's x-generation-id. */
  generationId?: string;
}

export interface ServerLimits {
  /** Time a client has to send the complete request headers (then 408 and the connection is closed). */
  headersTimeoutMs: number;
  /** Time a client has to send the complete request, body included. */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open. */
  keepAliveTimeoutMs: number;
  /** Open connections at most; more are closed as they arrive. */
  maxConnections: number;
  /** Request headers at most (more are ignored), and their total size (more: 431). */
  maxHeadersCount: number;
  maxHeaderBytes: number;
}

export const DEFAULT_SERVER_LIMITS: ServerLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 512,
  maxHeadersCount: 100,
  maxHeaderBytes: 16 * 1024,
};

export interface CloseOptions {
  /** How long in-flight requests may take to finish on their own (default 0: no wait). */
  graceMs?: number;
  /** Called when the grace period ends with requests still in flight: tell them to end now. */
  onGraceExpired?: () => void;
  /** How long those requests then get to settle before their connections are cut (default 3 s). */
  settleMs?: number;
  /**
   * After the connections are cut, how long handlers still running get to finish before close resolves
   * anyway (default 0): an inference handler settles its credit after its reply, and the store it writes
   * to must not be stopped under it. What is still running then is logged (its hold waits for the sweep).
   */
  finishMs?: number;
}

export interface LocalServer {
  server: Server;
  url: string;
  /** Requests whose handler has not finished yet. */
  readonly inFlight: number;
  /**
   * Stops accepting connections (idle keep-alive ones close now), lets in-flight requests finish within
   * the grace period, then asks them to end (onGraceExpired) and waits up to settleMs, then cuts what is
   * left and waits up to finishMs for the handlers of what was cut to finish.
   */
  close(options?: CloseOptions): Promise<void>;
}

const LAMBDA_PAYLOAD_LIMIT = 6 * 1024 * 1024;
const TEXT_TYPES = /^(application\/(json|x-www-form-urlencoded|x-ndjson)|text\/)/i;

export function largestRouteBody(list: readonly RouteDef[]): number {
  return Math.max(...list.map((route) => route.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES));
}

export async function startLocalServer(options: LocalServerOptions): Promise<LocalServer> {
  const matchAny = createRouter(routes as readonly RouteDef[]);
  const maxBody = options.maxBodyBytes ?? Math.min(LAMBDA_PAYLOAD_LIMIT, Math.max(largestRouteBody(routes), DEFAULT_MAX_BODY_BYTES));
  const log = new Logger(options.log ?? ((line: string) => console.error(line)));
  const timeoutMs = options.timeoutMs ?? 15 * 60 * 1000;

  function functionFor(method: string, path: string): LambdaFunction {
    const match = matchAny(method, path);
    if (match.kind === 'found') return match.route.fn;
    if (match.kind === 'method-not-allowed') {
      // The function that serves the path with a method it allows answers the 405 (GET on an inference
      // route reaches the inference function's URL on AWS).
      for (const allowed of match.allowed) {
        const sibling = matchAny(allowed, path);
        if (sibling.kind === 'found') return sibling.route.fn;
      }
    }
    return 'management';
  }

  const limits = { ...DEFAULT_SERVER_LIMITS, ...options.limits };
  // Each request's handler, until it has finished (for an inference request: until its generation is settled).
  const inFlight = new Map<Promise<void>, Exchange>();
  let draining = false;

  const server = createServer({
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    maxHeaderSize: limits.maxHeaderBytes,
    // How often the header and request timeouts are checked (Node's default, 30 s, lets a slow client linger).
    connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs),
    // Node would answer a request without Host with an empty 400: serve() answers it with the envelope.
    requireHostHeader: false,
  }, (req, res) => {
    const requestId = randomUUID();
    const exchange = new Exchange(req, res, requestId);
    if (draining) {
      refuse(req, res, exchange, requestId);
      return;
    }
    // What waits for the handler holds the exchange, not the request and its reply: an inference handler
    // finishes its deferred work (records waiting for their page) after the reply, and the exchange lets
    // go of both once the reply is written. No closure of this function may use `req` or `res`: they
    // would then live in the context these callbacks share, and every reply would be kept until its
    // record's page is written (tens of milliseconds, long enough to survive a scavenge into old space).
    const handled = serve(req, res, requestId).then(() => exchange.end(), (err: unknown) => exchange.fail(err, log));
    const settled = handled.finally(() => {
      inFlight.delete(settled);
      if (options.onRequestDone) options.onRequestDone(exchange.done());
    });
    inFlight.set(settled, exchange);
  });

  /** A keep-alive connection's next request after shutdown began: refused, and the connection closed. */
  function refuse(req: IncomingMessage, res: ServerResponse, exchange: Exchange, requestId: string): void {
    req.resume();
    res.shouldKeepAlive = false;
    const refused = new Promise<void>((resolve) => res.once('close', () => resolve())).finally(() => inFlight.delete(refused));
    inFlight.set(refused, exchange);
    writeEnvelope(res, new ServiceUnavailableError('The gateway is shutting down'), requestId, log);
  }
  server.maxConnections = limits.maxConnections;
  // Node would silently drop the headers past its count (a second Authorization header among them, which
  // must be refused as on AWS): it keeps them all (maxHeaderSize still bounds their bytes) and serve()
  // answers 431 above the cap instead.
  server.maxHeadersCount = 0;
  // An Expect other than 100-continue: 417 with the envelope (Node's own answer has no body).
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    res.shouldKeepAlive = false;
    const body = JSON.stringify({ error: { code: 417, message: 'Expectation Failed: only Expect: 100-continue is supported' } });
    res.writeHead(417, { 'content-type': 'application/json', 'x-content-type-options': 'nosniff', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });

  async function serve(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
    // CORS as the Function URL and the HTTP API answer it on AWS: any origin, bearer keys, no cookies.
    res.setHeader('access-control-allow-origin', '*');
    res.setHeader('access-control-expose-headers', 'x-generation-id, x-request-id, retry-after');
    res.setHeader('x-content-type-options', 'nosniff');
    if (req.rawHeaders.length / 2 > limits.maxHeadersCount) {
      req.resume();
      throw new HttpError(431, `More than ${limits.maxHeadersCount} request headers`);
    }
    if (req.headers.host === undefined && req.httpVersionMinor >= 1) {
      req.resume();
      throw new HttpError(400, 'Bad request: HTTP/1.1 requires a Host header');
    }
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) {
      req.resume();
      res.writeHead(204, {
        'access-control-allow-methods': 'GET, POST, PUT, PATCH, DELETE',
        'access-control-allow-headers': CORS_ALLOWED_HEADERS.join(', '),
        'access-control-max-age': '3600',
      });
      res.end();
      return;
    }
    const url = requestUrl(req);
    const body = await readBody(req, maxBody);
    const event = toEvent(req, url, body, requestId);
    const context = lambdaContext(requestId, timeoutMs);
    const fn = functionFor(event.requestContext.http.method, url.pathname);
    if (fn === 'inference') {
      // Returned rather than awaited: this frame (the request, its body, the event) is not kept while the
      // invocation finishes its deferred work after the reply (records waiting for their page). A reply the
      // handler left open is ended by the exchange.
      return options.handlers.inference(event, res, context);
    }
    const result = await options.handlers.management(event, context);
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(result.headers ?? {})) headers[name] = String(value);
    if (result.cookies?.length) headers['set-cookie'] = result.cookies;
    res.writeHead(result.statusCode ?? 200, headers);
    res.end(result.body === undefined ? undefined : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8'));
  }

  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    const [status, reason, message] = err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'Request Timeout', 'The request was not received in time']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large', `Request headers are larger than ${limits.maxHeaderBytes} bytes`]
        : [400, 'Bad Request', `Bad HTTP request: ${err.message}`];
    const body = JSON.stringify({ error: { code: status, message } });
    socket.end(`HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\nx-content-type-options: nosniff\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  return {
    server,
    url: `http://${options.host && options.host !== '0.0.0.0' ? options.host : '127.0.0.1'}:${port}`,
    get inFlight() {
      return inFlight.size;
    },
    close: async (close = {}) => {
      draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // Replies not yet started say `connection: close`, and their connections close after them.
      for (const exchange of inFlight.values()) exchange.closeAfterReply();
      if (inFlight.size > 0 && (close.graceMs ?? 0) > 0) await settledWithin(inFlight, close.graceMs ?? 0);
      if (inFlight.size > 0) {
        close.onGraceExpired?.();
        await settledWithin(inFlight, close.settleMs ?? 3000);
      }
      server.closeAllConnections();
      if (inFlight.size > 0 && (close.finishMs ?? 0) > 0) await settledWithin(inFlight, close.finishMs ?? 0);
      if (inFlight.size > 0) {
        log.warn(`${inFlight.size} request(s) still unsettled at shutdown: their credit holds are left to the expired-hold sweep`);
      }
      await closed;
    },
  };
}

/**
 * The request target as a URL. An absolute-form target (`GET http://host/path`, as proxies send) whose host
 * cannot be parsed is the client's error: 400, as API Gateway answers it.
 */
function requestUrl(req: IncomingMessage): URL {
  try {
    return new URL(req.url ?? '/', 'http://localhost');
  } catch {
    req.resume();
    throw new HttpError(400, 'Bad request target: not a path or a URL');
  }
}

/** Resolves once every promise in `pending` (as it is then) has settled, or after `ms`. */
async function settledWithin(pending: Map<Promise<void>, unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.allSettled([...pending.keys()]),
    new Promise<void>((resolve) => { timer = setTimeout(resolve, ms); }),
  ]);
  clearTimeout(timer);
}

function writeEnvelope(res: ServerResponse, err: unknown, requestId: string, log: Logger): void {
  const reply = toErrorReply(err, requestId, log);
  // Also for replies written without serve() (the 503 of a request arriving while draining): every reply says nosniff.
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-content-type-options': 'nosniff', 'x-request-id': requestId, ...reply.headers };
  if (reply.status === 413 && !res.req.complete) {
    headers.connection = 'close';
    if (res.socket) lingerAfterReply(res.socket);
  }
  res.writeHead(reply.status, headers);
  res.end(JSON.stringify(reply.body));
}

/** How long a connection whose body was refused unread is still read after its reply, at most. */
const LINGER_MS = 2000;

/**
 * A reply sent before the request's body was read (a 413 past the drain cap) closes its connection, and
 * Node closes it with destroySoon(): the write side ends after the reply, then the socket is destroyed.
 * Destroying a socket with unread bytes in it sends a reset, which can reach a client that is still
 * writing before it has read the reply: it then fails with EPIPE instead of reading the 413. As nginx's
 * lingering close does, the write side ends after the reply, what the client still sends is read and
 * dropped (the request's body stream discards it), and the socket is destroyed once the client ends its side
 * or after LINGER_MS, whichever is first.
 */
function lingerAfterReply(socket: Socket): void {
  socket.destroySoon = function lingeringClose(this: Socket) {
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    timer.unref();
    this.once('close', () => clearTimeout(timer));
    this.once('end', () => this.destroy());
    this.end();
  };
}

/**
 * Reads the body up to `maxBytes`. A larger body is still drained (up to a hard cap) before the 413 is
 * sent, so clients that are mid-upload read the envelope instead of failing with EPIPE; past the cap the
 * 413 is sent at once and the connection closes after it.
 */
function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const drainCap = Math.max(maxBytes * 4, 64 * 1024 * 1024);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const declared = Number(req.headers['content-length']);
    let tooLarge = Number.isFinite(declared) && declared > maxBytes;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      reject(err);
    };
    if (Number.isFinite(declared) && declared > drainCap) {
      req.resume();
      fail(new PayloadTooLargeError(maxBytes));
      return;
    }
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      // Past the drain cap (a chunked body, whose size is not declared): the 413 goes out now, with
      // `connection: close`, as for a declared size over the cap; the connection closes once it is
      // written, and the client's further writes fail. Destroying the connection here would reset it
      // before the 413 was written.
      if (size > drainCap) {
        fail(new PayloadTooLargeError(maxBytes));
        return;
      }
      if (size > maxBytes) tooLarge = true;
      if (!tooLarge) chunks.push(chunk);
    });
    req.on('end', () => {
      if (tooLarge) fail(new PayloadTooLargeError(maxBytes));
      else if (!settled) {
        settled = true;
        resolve(Buffer.concat(chunks));
      }
    });
    req.on('error', (err) => fail(new BadRequestError(`Could not read request body: ${err.message}`)));
  });
}

/**
 * One request's exchange, for what runs after its handler: the access-log entry, a reply the handler left
 * open or an error it threw, and the shutdown's `connection: close`. It holds the request and the reply
 * only until the reply is written.
 */
class Exchange {
  private readonly method: string;
  private readonly path: string;
  private readonly started = performance.now();
  private res: ServerResponse | undefined;
  private status = 0;
  private generationId: string | undefined;

  constructor(req: IncomingMessage, res: ServerResponse, private readonly requestId: string) {
    this.method = req.method ?? 'GET';
    this.path = (req.url ?? '/').split('?')[0]!;
    this.res = res;
    res.once('finish', () => this.written());
  }

  private written(): void {
    const res = this.res;
    if (!res) return;
    this.status = res.statusCode;
    const generationId = res.getHeader('x-generation-id');
    if (typeof generationId === 'string') this.generationId = generationId;
    this.res = undefined;
  }

  /** The handler finished: a reply it left open is ended. */
  end(): void {
    if (this.res && !this.res.writableEnded) this.res.end();
  }

  /** The handler threw: an error envelope if nothing was written yet, otherwise the reply is cut. */
  fail(err: unknown, log: Logger): void {
    const res = this.res;
    if (res && !res.headersSent) {
      writeEnvelope(res, err, this.requestId, log);
      return;
    }
    log.entry('error', { request_id: this.requestId, message: 'handler failed after the first byte', error: String(err) });
    res?.destroy();
  }

  /** Shutting down: a reply not begun yet says `connection: close`, and its connection closes after it. */
  closeAfterReply(): void {
    if (this.res && !this.res.headersSent) this.res.shouldKeepAlive = false;
  }

  done(): RequestDone {
    if (this.res) this.written();
    return {
      method: this.method, path: this.path, status: this.status, ms: performance.now() - this.started, requestId: this.requestId,
      ...(this.generationId === undefined ? {} : { generationId: this.generationId }),
    };
  }
}

let lastTime = { second: Number.NaN, text: '' };

/** The event's `time` (`Tue, 24 Nov 2026 15:30:00 GMT`), made once a second. */
function utcTime(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== lastTime.second) lastTime = { second, text: new Date(second * 1000).toUTCString() };
  return lastTime.text;
}

function toEvent(req: IncomingMessage, url: URL, body: Buffer, requestId: string): APIGatewayProxyEventV2 {
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  // Every value of every header, as API Gateway (payload 2.0) passes them: duplicates joined with commas.
  // Node's req.headers keeps only the first value of some (authorization among them), which would let the
  // first of two credentials win locally while AWS sees both.
  const raw = req.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const name = raw[index]!.toLowerCase();
    const value = raw[index + 1]!;
    if (name === 'cookie') {
      for (const cookie of value.split(/;\s*/)) if (cookie) cookies.push(cookie);
    } else if (Object.hasOwn(headers, name)) {
      headers[name] += `,${value}`;
    } else if (name !== '__proto__') {
      headers[name] = value;
    }
  }
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) {
    if (Object.hasOwn(query, name)) query[name] += `,${value}`;
    else if (name !== '__proto__') query[name] = value;
  }
  // Text that is not UTF-8 goes base64-encoded, as binary does: decoded, its bad bytes would become U+FFFD
  // unseen, and the handler's parse refuses it with a 400 instead.
  const isText = TEXT_TYPES.test(headers['content-type'] ?? 'application/json') && isUtf8(body);
  const now = Date.now();
  const method = (req.method ?? 'GET').toUpperCase();
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: url.pathname,
    rawQueryString: url.search.startsWith('?') ? url.search.slice(1) : url.search,
    cookies: cookies.length ? cookies : undefined,
    headers,
    queryStringParameters: Object.keys(query).length ? query : undefined,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: (headers.host ?? 'localhost').split('.')[0] ?? 'localhost',
      http: {
        method,
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      routeKey: '$default',
      stage: '$default',
      time: utcTime(now),
      timeEpoch: now,
    },
    body: body.length === 0 ? undefined : body.toString(isText ? 'utf8' : 'base64'),
    isBase64Encoded: body.length > 0 && !isText,
  };
}

const ignore = () => undefined;

function lambdaContext(requestId: string, timeoutMs: number): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: 'gateway-local',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:local:000000000000:function:gateway-local',
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: '/aws/lambda/gateway-local',
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: ignore,
    fail: ignore,
    succeed: ignore,
  };
}
