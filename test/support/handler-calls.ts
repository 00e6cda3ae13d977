// Calls into the Lambda handlers in-process, as the integration tests make them: a reply's body read whole,
// a management call over some deps, and a chat completion whose stream's last usage chunk stands in for the
// JSON reply.
import type { Readable } from 'node:stream';
import type { GatewayDeps } from '../../lambdas/app/deps.js';
import { httpEvent } from './events.js';
import { installAwsLambdaShim } from '../../bin/local/awslambda-shim.js';

installAwsLambdaShim();
export const { handleInference } = await import('../../lambdas/handlers/inference.js');
export const { handleManagement } = await import('../../lambdas/handlers/management.js');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = Record<string, any>;

export async function readBody(body: string | Readable): Promise<string> {
  if (typeof body === 'string') return body;
  let text = '';
  for await (const chunk of body) text += String(chunk);
  return text;
}

export async function manage(deps: GatewayDeps, key: string, method: string, path: string, body?: unknown, query?: Record<string, string>): Promise<{ status: number; json: Json }> {
  const reply = await handleManagement(httpEvent({ method, path: `/api/v1${path}`, key, ...(body === undefined ? {} : { body }), ...(query ? { query } : {}) }), deps);
  const text = String(reply.body ?? '');
  // A 204 has no body.
  return { status: reply.statusCode ?? 200, json: (text === '' ? {} : JSON.parse(text)) as Json };
}

/** A chat completion through `deps`; a stream's final usage chunk stands in for the JSON reply. */
export async function chatCompletion(deps: GatewayDeps, key: string, body: Json, invocation?: Parameters<typeof handleInference>[3]): Promise<{ status: number; json: Json; id: string | undefined }> {
  const reply = await handleInference(httpEvent({ method: 'POST', path: '/api/v1/chat/completions', key, body }), deps, undefined, invocation);
  const text = await readBody(reply.body);
  const id = reply.headers['x-generation-id'];
  if (!body.stream || reply.statusCode !== 200) return { status: reply.statusCode, json: JSON.parse(text) as Json, id };
  const frames = text.split('\n\n').filter((frame) => frame.startsWith('data: {')).map((frame) => JSON.parse(frame.slice(6)) as Json);
  return { status: reply.statusCode, json: frames.at(-1)!, id };
}
