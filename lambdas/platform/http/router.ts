// Matches a method and path against the route table: a route with its path parameters,
// the methods the path does allow (for 405), or nothing (404). HEAD matches what GET does.
import type { RouteDef } from './route.js';

export const API_PREFIX = '/api/v1';

export type RouteMatch<R extends RouteDef> =
  /** `undecodable`: a parameter that is not valid percent-encoded UTF-8 (its value is then the raw text). */
  | { kind: 'found'; route: R; params: Record<string, string>; undecodable?: string }
  | { kind: 'method-not-allowed'; allowed: string[] }
  | { kind: 'not-found' };

interface Compiled<R> {
  route: R;
  segments: string[];
}

export function fullPath(route: RouteDef): string {
  return route.unversioned ? route.path : `${API_PREFIX}${route.path}`;
}

export function createRouter<R extends RouteDef>(routes: readonly R[]): (method: string, path: string) => RouteMatch<R> {
  const compiled: Compiled<R>[] = routes.map((route) => ({ route, segments: split(fullPath(route)) }));
  const matchSegmentsOf = (method: string, segments: string[]): RouteMatch<R> => {
    const allowed: string[] = [];
    for (const entry of compiled) {
      const matched = matchSegments(entry.segments, segments);
      if (!matched) continue;
      if (entry.route.method === method) return { kind: 'found', route: entry.route, ...matched };
      if (!allowed.includes(entry.route.method)) allowed.push(entry.route.method, ...(entry.route.method === 'GET' ? ['HEAD'] : []));
    }
    return allowed.length ? { kind: 'method-not-allowed', allowed } : { kind: 'not-found' };
  };
  // The paths of routes without parameters, each answered as the matcher below answers it (made once here):
  // a request to one of them is found without trying every route of the table (135 under npm start).
  const known = new Map<string, Map<string, RouteMatch<R>>>();
  const methods = [...new Set(routes.map((route) => route.method))];
  for (const entry of compiled) {
    const path = `/${entry.segments.join('/')}`;
    if (entry.segments.some(isParameter) || known.has(path)) continue;
    known.set(path, new Map(methods.map((method) => [method, matchSegmentsOf(method, entry.segments)])));
  }
  // An encoded slash is a separator, as a literal one is: no path parameter holds a slash, and the openai
  // client's models.retrieve('simulator/echo') asks for /models/simulator%2Fecho, which is the model
  // /models/{author}/{slug}. Static routes are matched the same way, so they keep winning.
  return (requested, path) => {
    // HEAD is GET without the body (RFC 9110 9.3.2): routed as GET, and the handler sends no body.
    const method = requested === 'HEAD' ? 'GET' : requested;
    const found = known.get(path)?.get(method);
    if (found?.kind === 'found') return { kind: 'found', route: found.route, params: Object.assign({}, found.params) };
    return matchSegmentsOf(method, split(path.replace(/%2f/gi, '/')));
  };
}

function isParameter(segment: string): boolean {
  return segment.startsWith('{') && segment.endsWith('}');
}

function split(path: string): string[] {
  return path.split('/').filter((segment) => segment.length > 0);
}

function matchSegments(pattern: string[], actual: string[]): { params: Record<string, string>; undecodable?: string } | undefined {
  if (pattern.length !== actual.length) return undefined;
  const params: Record<string, string> = {};
  let undecodable: string | undefined;
  for (let i = 0; i < pattern.length; i += 1) {
    const expected = pattern[i]!;
    const got = actual[i]!;
    if (isParameter(expected)) {
      const name = expected.slice(1, -1);
      try {
        params[name] = decodeURIComponent(got);
      } catch {
        // Still this route's path: the parameter is refused by name (dispatch), not the path as unknown.
        params[name] = got;
        undecodable ??= name;
      }
    } else if (expected !== got) {
      return undefined;
    }
  }
  return undecodable === undefined ? { params } : { params, undecodable };
}
