// What the HTTP platform knows of authentication: what a route may require, and the port that checks it.
// The checking itself belongs to the keys feature (keys/authenticate.ts), which also gives `Principal` its
// fields, so the platform never imports a feature.

/**
 * none: no key needed. optional: a key is checked if one is sent. any: any valid key.
 * management: management keys only (403 otherwise). inference: regular keys only (management keys get 403).
 * regular: regular keys only, for non-inference routes (vault, interns).
 */
export type AuthRequirement = 'none' | 'optional' | 'any' | 'management' | 'inference' | 'regular';

/** What a route declares about authentication (RouteDef's `auth` and `organizationOnly`). */
export interface AuthRule {
  auth: AuthRequirement;
  /** Answer 404 to keys of personal accounts. */
  organizationOnly?: boolean | undefined;
}

/** The authenticated caller. Its fields are declared by the authenticator (keys/authenticate.ts). */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface Principal {}

/** Checks a request's credentials against its route: the principal, null when the route needs none, or a domain error. */
export type Authenticator = (headers: Record<string, string>, route: AuthRule) => Promise<Principal | null>;
