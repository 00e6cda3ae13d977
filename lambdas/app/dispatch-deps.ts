// What the HTTP platform's dispatch gets from the composition root: the keys feature's authenticator over
// these deps, and their logger (whose sink the local runtime replaces).
import type { GatewayDeps } from './deps.js';
import type { DispatchDeps } from '../platform/http/dispatch.js';
import { createAuthenticator } from '../keys/index.js';

const composed = new WeakMap<GatewayDeps, DispatchDeps>();

export function dispatchDepsOf(deps: GatewayDeps): DispatchDeps {
  let dispatchDeps = composed.get(deps);
  if (!dispatchDeps) composed.set(deps, dispatchDeps = { authenticate: createAuthenticator(deps), log: deps.log });
  return dispatchDeps;
}
