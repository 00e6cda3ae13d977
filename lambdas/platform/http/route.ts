// What a route is: the declaration in the route table, and the shape of the code that serves it.
import type { z } from 'zod';
import type { Readable } from 'node:stream';
import type { GatewayRequest } from './request.js';
import type { AuthRequirement, Principal } from './auth.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type LambdaFunction = 'inference' | 'management';

export type { AuthRequirement } from './auth.js';

/** What a path parameter may look like: checked before authentication and any store access (400 otherwise). */
export interface PathParam {
  /** Anchored pattern the decoded value must match. */
  pattern: RegExp;
  /** The expected form in words, for the 400 message and the OpenAPI document. */
  expected: string;
}

export interface RouteDef {
  operationId: string;
  method: HttpMethod;
  /** Relative to /api/v1 unless `unversioned`; `{name}` marks a path parameter. */
  path: string;
  /** The pattern of every `{name}` in `path` (a unit test checks that none is missing). */
  params?: Record<string, PathParam>;
  unversioned?: boolean;
  fn: LambdaFunction;
  auth: AuthRequirement;
  /** Answer 404 to keys of personal accounts. */
  organizationOnly?: boolean;
  tag: string;
  summary: string;
  body?: z.ZodType;
  query?: z.ZodType;
  response?: z.ZodType;
  successStatus?: number;
  /** Largest accepted request body; 413 above it. */
  maxBodyBytes?: number;
  /** The body's top-level fields that are null count as left out (the inference routes and the preset routes that take an inference request, as OpenAI's API). */
  nullFieldsAbsent?: boolean;
  /**
   * The error envelope's flavour: 'lifecycle' (the intern routes, @openrouter/sdk's InternLifecycleError)
   * adds `reason` and `retryable` to any metadata; 'anthropic' (POST /messages, for Anthropic's SDKs) adds
   * Anthropic's `type: "error"` and `error.type` beside the usual code and message.
   */
  errorMetadata?: 'lifecycle' | 'anthropic';
}

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export interface OperationContext<Body = unknown, Query = unknown, Caller = Principal | null, Params = Record<string, string>> {
  request: GatewayRequest;
  /** The path parameters, each already checked against its route's pattern. */
  params: Params;
  body: Body;
  query: Query;
  /** The authenticated key: never null on routes that require one (dispatch refused the request otherwise). */
  principal: Caller;
  /**
   * Work that must finish before the invocation ends but need not delay the reply (e.g. the generation
   * record). Undefined when the caller cannot wait after replying: then the operation awaits it itself.
   */
  defer?: (work: Promise<unknown>) => void;
}

export interface JsonResult {
  kind?: 'json';
  status?: number;
  headers?: Record<string, string>;
  body: unknown;
}

/** A body written as it is produced (SSE, audio); headers go out with the first byte. */
export interface StreamResult {
  kind: 'stream';
  status?: number;
  headers: Record<string, string>;
  body: Readable;
}

/** A body sent as it is (not JSON): its content-type among the headers. */
export interface TextResult {
  kind: 'text';
  status?: number;
  headers: Record<string, string>;
  body: string;
}

export type OperationResult = JsonResult | StreamResult | TextResult;

type Infer<T> = T extends z.ZodType ? z.output<T> : undefined;

/** What `authenticate` hands a route of this requirement: nothing, maybe a key, or always a key. */
export type PrincipalFor<A extends AuthRequirement> = A extends 'none' ? null : A extends 'optional' ? Principal | null : Principal;
type ParamsOf<R extends RouteDef> = R['params'] extends Record<string, PathParam> ? { [K in keyof R['params']]: string } : Record<string, never>;

export type OperationFor<R extends RouteDef> = (
  ctx: OperationContext<Infer<R['body']>, Infer<R['query']>, PrincipalFor<R['auth']>, ParamsOf<R>>,
) => Promise<OperationResult>;

/** The operations of a list of routes (declared `as const`), each typed by its route. */
export type OperationsFor<Routes extends readonly RouteDef[]> = { [R in Routes[number] as R['operationId']]: OperationFor<R> };
