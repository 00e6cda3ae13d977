// The end-user routes' operations: register, read (with usage per window, from the meter as stored), change
// and forget the organization's end users. Every change drops inference's cached list here at once.
import { echo } from '../platform/echo.js';
import type { z } from 'zod';
import { ConflictError, NotFoundError } from '../platform/errors.js';
import type { Principal } from '../platform/http/auth.js';
import { listPage } from '../platform/http/list-page.js';
import { usageFields } from '../keys/index.js';
import type { EndUserRepository } from './end-user-repository.js';
import type { EndUserOperations } from './routes.js';
import type { endUserSchema } from './schemas.js';
import { endUserHash, type EndUser } from './types.js';

export interface EndUserPorts {
  endUsers: Pick<EndUserRepository, 'create' | 'get' | 'list' | 'update' | 'delete'>;
  /** Drops the organization's end users cached for inference. */
  invalidate: (orgId: string) => void;
  clock: () => Date;
}

export function endUserView(endUser: EndUser, now: Date): z.infer<typeof endUserSchema> {
  return {
    user: endUser.user,
    user_hash: endUser.user_hash,
    name: endUser.name,
    disabled: endUser.disabled,
    ...usageFields(endUser, now),
    created_at: endUser.created_at,
    updated_at: endUser.updated_at,
  };
}

const HASH = /^[0-9a-f]{32}$/;

export function createEndUserOperations(deps: EndUserPorts): EndUserOperations {
  const orgOf = (principal: Principal) => principal.key.org_id;

  /**
   * The end user a path names: by its id, or by its user_hash (how an id holding a `/`, which the router reads
   * as a path separator even encoded, is named).
   */
  async function found(principal: Principal, user: string): Promise<EndUser> {
    const orgId = orgOf(principal);
    const endUser = await deps.endUsers.get(orgId, endUserHash(orgId, user)) ?? (HASH.test(user) ? await deps.endUsers.get(orgId, user) : undefined);
    if (!endUser) throw new NotFoundError(`End user not found: ${user}`);
    return endUser;
  }

  return {
    async listEndUsers({ principal, query }) {
      const all = await deps.endUsers.list(orgOf(principal), true);
      const now = deps.clock();
      return { body: listPage(all.sort((a, b) => b.created_at.localeCompare(a.created_at) || a.user_hash.localeCompare(b.user_hash)), query, (endUser) => endUserView(endUser, now)) };
    },
    async createEndUser({ principal, body }) {
      const orgId = orgOf(principal);
      const now = deps.clock();
      const userHash = endUserHash(orgId, body.user);
      // A path names an end user by its id, or by its user_hash: an id that is another end user's user_hash
      // (or the other way round) would leave one of the two without a path to it.
      const [hashOfOther, idOfOther] = await Promise.all([
        HASH.test(body.user) ? deps.endUsers.get(orgId, body.user) : undefined,
        deps.endUsers.get(orgId, endUserHash(orgId, userHash)),
      ]);
      if (hashOfOther && hashOfOther.user !== body.user) throw new ConflictError(`End user id ${echo(body.user, 64)} is the user_hash of another end user, by which paths name that one; choose another id`);
      if (idOfOther) throw new ConflictError(`End user id ${echo(body.user, 64)} has the user_hash ${userHash}, which another end user has as its id; choose another id`);
      const created = await deps.endUsers.create({
        org_id: orgId, user: body.user, user_hash: userHash, name: body.name ?? null,
        limit: body.limit ?? null, limit_reset: body.limit_reset ?? null, include_byok_in_limit: body.include_byok_in_limit ?? false,
        disabled: body.disabled ?? false, created_at: now.toISOString(), updated_at: now.toISOString(),
      }, now);
      if (!created) throw new ConflictError(`End user ${body.user} exists already; change it with PATCH /end-users/{user}`);
      deps.invalidate(orgId);
      return { status: 201, body: { data: endUserView(created, now) } };
    },
    async getEndUser({ principal, params }) {
      return { body: { data: endUserView(await found(principal, params.user), deps.clock()) } };
    },
    async updateEndUser({ principal, params, body }) {
      const orgId = orgOf(principal);
      const now = deps.clock();
      // setFields leaves out what the body leaves out.
      const updated = await deps.endUsers.update(await found(principal, params.user), body, now.toISOString());
      if (!updated) throw new NotFoundError(`End user not found: ${params.user}`);
      deps.invalidate(orgId);
      return { body: { data: endUserView(updated, now) } };
    },
    async deleteEndUser({ principal, params }) {
      const orgId = orgOf(principal);
      if (!(await deps.endUsers.delete(await found(principal, params.user)))) throw new NotFoundError(`End user not found: ${params.user}`);
      deps.invalidate(orgId);
      return { body: { deleted: true as const } };
    },
  };
}
