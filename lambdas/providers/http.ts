// The HTTP exchange every adapter shares: POST JSON, map failures to ProviderError (status, Retry-After,
// the provider's own message), and validate what comes back with the adapter's zod schema.
import type { z } from 'zod';
import { ProviderError, parseRetryAfter } from './provider-error.js';
import type { FetchLike, UpstreamResponse } from './types.js';
import { fastCheckOf } from './fast-check.js';

export interface PostOptions {
  provider: string;
  fetch: FetchLike;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  signal?: AbortSignal | undefined;
  /** CallOptions.onBody: given the body before it is sent. */
  onBody?: ((body: unknown) => void) | undefined;
  /** Pulls a human message and code out of the provider's error body. */
  describeError?: (body: unknown) => { message?: string; code?: string } | undefined;
}

export function postJson(options: PostOptions): Promise<UpstreamResponse> {
  return callUpstream(options);
}

/**
 * One HTTP exchange with a provider: POST of `body` as JSON by default; `method: 'GET'` sends none, and
 * `text` is sent as it is (with the content type the headers give). A status other than 2xx is a ProviderError.
 */
export async function callUpstream(options: Omit<PostOptions, 'body'> & { body?: unknown; method?: 'GET' | 'POST'; text?: string }): Promise<UpstreamResponse> {
  let response: UpstreamResponse;
  const method = options.method ?? 'POST';
  if (options.onBody && method === 'POST') options.onBody(options.text ?? options.body);
  // Serialized before the exchange: a body that cannot be (a tool call's arguments nested thousands deep, which
  // the request's own depth check cannot see inside their string) is the request's fault, not the network's:
  // a 400 that is neither retried nor counted against the endpoint.
  let sent: string | undefined;
  try {
    sent = method === 'GET' ? undefined : options.text ?? JSON.stringify(options.body);
  } catch (err) {
    throw new ProviderError({ provider: options.provider, kind: 'http', status: 400, message: `The request could not be written for the provider: ${err instanceof Error ? err.message : String(err)}` });
  }
  try {
    response = await options.fetch(options.url, method === 'GET'
      ? { method, headers: options.headers, signal: options.signal }
      : {
        method,
        headers: options.text !== undefined ? options.headers : { 'content-type': 'application/json', ...options.headers },
        body: sent,
        signal: options.signal,
      });
  } catch (err) {
    throw transportError(options.provider, err, options.signal);
  }
  if (response.ok) return response;
  let text = '';
  try {
    text = await response.text();
  } catch {
    // The body is only for the message; the status says enough.
  }
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  const described = (parsed !== undefined ? options.describeError?.(parsed) : undefined) ?? {};
  throw new ProviderError({
    provider: options.provider,
    kind: 'http',
    status: response.status,
    message: described.message ?? (text.slice(0, 300) || `HTTP ${response.status}`),
    providerCode: described.code,
    retryAfterMs: parseRetryAfter(response.headers),
  });
}

export function transportError(provider: string, err: unknown, signal?: AbortSignal): ProviderError {
  if (err instanceof ProviderError) return err;
  const reason = signal?.aborted ? signal.reason : undefined;
  if (reason instanceof ProviderError) return reason;
  if (signal?.aborted) {
    const timedOut = reason instanceof DOMException && reason.name === 'TimeoutError';
    return new ProviderError({
      provider, kind: timedOut ? 'timeout' : 'aborted', status: timedOut ? 408 : 499,
      message: timedOut ? 'Upstream request timed out' : 'Request aborted', cause: err,
    });
  }
  return new ProviderError({ provider, kind: 'network', status: 502, message: `Upstream connection failed: ${(err as Error)?.message ?? String(err)}`, cause: err });
}

export async function readJson<S extends z.ZodType>(provider: string, response: UpstreamResponse, schema: S, signal?: AbortSignal): Promise<z.output<S>> {
  let text: string;
  try {
    text = await response.text();
  } catch (err) {
    if (signal?.aborted) throw transportError(provider, err, signal);
    // The status line and headers came, the body did not finish: the connection dropped mid-reply.
    throw new ProviderError({ provider, kind: 'dropped', status: 502, message: `Upstream connection dropped before the reply completed: ${(err as Error)?.message ?? String(err)}`, cause: err });
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new ProviderError({ provider, kind: 'invalid-response', status: 502, message: 'Upstream returned a body that is not JSON', cause: err });
  }
  return parseUpstream(provider, schema, body);
}

/**
 * The upstream value as the schema types it. A value that passes the quick check (fast-check.ts) is returned
 * as it is, unknown keys included, where zod's parse would have dropped them: adapters read the fields they
 * know and never pass an upstream object on whole.
 */
export function parseUpstream<S extends z.ZodType>(provider: string, schema: S, value: unknown): z.output<S> {
  // Most replies fit the schema's plain parts: checked without zod's copy (fast-check.ts).
  if (fastCheckOf(schema)?.(value)) return value as z.output<S>;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw new ProviderError({
    provider, kind: 'invalid-response', status: 502,
    message: `Upstream reply does not match the ${provider} format${issue ? ` at ${issue.path.join('.') || '(root)'}: ${issue.message}` : ''}`,
  });
}

export function parseJsonText(provider: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ProviderError({ provider, kind: 'invalid-response', status: 502, message: 'Upstream stream event is not JSON', cause: err });
  }
}
