// Building blocks of the path-parameter patterns the features declare on their routes (checked by dispatch
// before authentication, so a malformed identifier never reaches the store).
import type { PathParam } from './route.js';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** One anchored pattern that accepts what any of `patterns` accepts. */
export const anyOf = (...patterns: RegExp[]): RegExp => new RegExp(`^(?:${patterns.map((pattern) => pattern.source.replace(/^\^|\$$/g, '')).join('|')})$`);

/** An identifier that is a UUID; `noun` names it in the 400 message and the OpenAPI document. */
export const uuidParam = (noun: string): PathParam => ({ pattern: UUID, expected: `${noun} (UUID)` });
