// Extension points of the pipeline, in one shape (the AI SDK's wrapLanguageModel middleware): a middleware
// may rewrite the call before anything is reserved (transformParams), and wrap the provider call with its
// retries and fallbacks (wrapGenerate, wrapStream). The first middleware transforms first and is the
// outermost wrapper. Hooks a middleware leaves out cost nothing per request.
import type { Caller, EngineDeps } from './engine.js';
import type { Generated, Streaming } from './attempts.js';
import type { InferenceRequest } from './inference-request.js';
import type { Candidate } from './routing.js';
import type { RouteTrace } from './trace.js';

/** What a middleware may rewrite: the request and the endpoints to try, in order. */
export interface GenerationParams {
  request: InferenceRequest;
  candidates: Candidate[];
}

/** One request's call as every hook sees it; `params` is what the earlier middleware made of it. */
export interface GenerationCall {
  type: 'generate' | 'stream';
  params: GenerationParams;
  caller: Caller;
  trace: RouteTrace;
  deps: EngineDeps;
}

export interface GenerationMiddleware {
  /** Before the hold: what it returns is what is reserved for and called. Return `params` itself to change nothing. */
  transformParams?(call: GenerationCall): GenerationParams | Promise<GenerationParams>;
  wrapGenerate?(call: GenerationCall & { doGenerate: () => Promise<Generated> }): Promise<Generated>;
  /** The stream resolves at its first event (failing over is over by then); its `events` may be wrapped. */
  wrapStream?(call: GenerationCall & { doStream: () => Promise<Streaming> }): Promise<Streaming>;
}

/** A middleware list sorted by hook once (per list, not per request). */
export interface MiddlewareChain {
  transforms: GenerationMiddleware[];
  generateWrappers: GenerationMiddleware[];
  streamWrappers: GenerationMiddleware[];
}

const chains = new WeakMap<readonly GenerationMiddleware[], MiddlewareChain>();

export function chainOf(middleware: readonly GenerationMiddleware[]): MiddlewareChain {
  let chain = chains.get(middleware);
  if (!chain) {
    chain = {
      transforms: middleware.filter((entry) => entry.transformParams),
      generateWrappers: middleware.filter((entry) => entry.wrapGenerate),
      streamWrappers: middleware.filter((entry) => entry.wrapStream),
    };
    chains.set(middleware, chain);
  }
  return chain;
}

/** The provider call inside every wrapGenerate, the first middleware outermost. */
export function wrappedGenerate(chain: MiddlewareChain, call: GenerationCall, doGenerate: () => Promise<Generated>): Promise<Generated> {
  const wrappers = chain.generateWrappers;
  if (wrappers.length === 0) return doGenerate();
  const step = (index: number): Promise<Generated> => (index === wrappers.length ? doGenerate() : wrappers[index]!.wrapGenerate!({ ...call, doGenerate: () => step(index + 1) }));
  return step(0);
}

/** The stream's start inside every wrapStream, the first middleware outermost. */
export function wrappedStream(chain: MiddlewareChain, call: GenerationCall, doStream: () => Promise<Streaming>): Promise<Streaming> {
  const wrappers = chain.streamWrappers;
  if (wrappers.length === 0) return doStream();
  const step = (index: number): Promise<Streaming> => (index === wrappers.length ? doStream() : wrappers[index]!.wrapStream!({ ...call, doStream: () => step(index + 1) }));
  return step(0);
}
