// The preflight's allowed headers cover every header the client SDKs send from a browser: each SDK's
// request is captured (a fetch of our own) and every header name it carries that is not CORS-safelisted
// must be in CORS_ALLOWED_HEADERS, or a browser would refuse the SDK's requests.
import { describe, expect, it } from '@jest/globals';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { HTTPClient, OpenRouter } from '@openrouter/sdk';
import { CORS_ALLOWED_HEADERS } from '../../lambdas/platform/http/cors.js';

/** Headers a page may send without a preflight naming them, and those a browser sets itself. */
const NOT_PREFLIGHTED = new Set(['accept', 'accept-language', 'content-language', 'user-agent', 'content-length', 'host', 'connection', 'accept-encoding', 'cookie']);

function capturing(): { fetch: typeof fetch; names: Set<string> } {
  const names = new Set<string>();
  const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
    const headers = new Headers(input instanceof Request ? input.headers : undefined);
    new Headers(init?.headers).forEach((value, name) => headers.set(name, value));
    headers.forEach((_value, name) => names.add(name.toLowerCase()));
    return new Response(JSON.stringify({ error: { code: 400, message: 'captured' } }), { status: 400, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  return { fetch: fetchFn, names };
}

function unlisted(names: Set<string>): string[] {
  const allowed = new Set<string>(CORS_ALLOWED_HEADERS);
  return [...names].filter((name) => !NOT_PREFLIGHTED.has(name) && !allowed.has(name)).sort();
}

describe('CORS allowed headers', () => {
  it('cover what OpenAI\'s SDK sends from a browser', async () => {
    const { fetch, names } = capturing();
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: 'http://gateway.test/api/v1', dangerouslyAllowBrowser: true, maxRetries: 0, fetch, organization: 'org', project: 'project' });
    await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }).catch(() => undefined);
    expect(names.has('x-stainless-lang')).toBe(true);
    expect(unlisted(names)).toEqual([]);
  });

  it('cover what Anthropic\'s SDK sends from a browser', async () => {
    const { fetch, names } = capturing();
    const client = new Anthropic({ apiKey: 'sk-test', baseURL: 'http://gateway.test/api', dangerouslyAllowBrowser: true, maxRetries: 0, fetch });
    await client.messages.create({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'x' }] }).catch(() => undefined);
    expect(names.has('anthropic-dangerous-direct-browser-access')).toBe(true);
    expect(unlisted(names)).toEqual([]);
  });

  it('cover what OpenRouter\'s SDK sends, with its app attribution', async () => {
    const { fetch, names } = capturing();
    const client = new OpenRouter({ apiKey: 'sk-test', serverURL: 'http://gateway.test/api/v1', httpReferer: 'https://app.example', appTitle: 'App', retryConfig: { strategy: 'none' }, httpClient: new HTTPClient({ fetcher: fetch }) });
    await client.chat.send({ chatRequest: { model: 'm', messages: [{ role: 'user', content: 'x' }] } } as never).catch(() => undefined);
    expect(names.has('http-referer')).toBe(true);
    expect(unlisted(names)).toEqual([]);
  });
});
