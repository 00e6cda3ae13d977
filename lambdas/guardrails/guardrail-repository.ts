// Guardrails and their key assignments, under the organization's partition: one Query of the `GR` sort
// keys reads an organization's whole policy (what inference caches).
import { randomUUID } from 'node:crypto';
import { BatchWriteCommand, DeleteCommand, GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { partition, queryAll } from '../platform/dynamo/query.js';
import { nanosFromStore, nanosToStore } from '../platform/money.js';
import type { Guardrail, GuardrailPolicy, KeyAssignment, MemberAssignment } from './types.js';

function strip(item: Record<string, unknown>): Record<string, unknown> {
  const { pk: _pk, sk: _sk, type: _type, ...rest } = item;
  return rest;
}

function guardrailFromItem(item: Record<string, unknown>): Guardrail {
  const guardrail = strip(item) as unknown as Guardrail;
  return { ...guardrail, limit: item.limit === undefined || item.limit === null ? null : nanosFromStore(item.limit), reset_interval: guardrail.reset_interval ?? null };
}

const BATCH_WRITE = 25;
const MAX_ROUNDS = 8;

export class GuardrailRepository {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string) {}

  async put(guardrail: Guardrail): Promise<void> {
    await this.db.send(new PutCommand({ TableName: this.tableName, Item: { ...itemKeys.guardrail(guardrail.org_id, guardrail.id), type: 'guardrail', ...guardrail, limit: guardrail.limit == null ? null : nanosToStore(guardrail.limit) } }));
  }

  async get(orgId: string, id: string): Promise<Guardrail | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.guardrail(orgId, id), ConsistentRead: true }));
    return Item ? guardrailFromItem(Item) : undefined;
  }

  /** The organization's guardrails and their key and member assignments, in one read. */
  async policy(orgId: string, consistent = false): Promise<PolicyRead> {
    const { pk, skPrefix } = itemKeys.guardrailPolicyOf(orgId);
    const items = await queryAll(this.db, partition(this.tableName, pk, { skPrefix, consistent }));
    const guardrails: Guardrail[] = [];
    const assignments: KeyAssignment[] = [];
    const memberAssignments: MemberAssignment[] = [];
    for (const item of items) {
      if (item.type === 'guardrail') guardrails.push(guardrailFromItem(item));
      else if (item.type === 'guardrail_key') assignments.push(strip(item) as unknown as KeyAssignment);
      else if (item.type === 'guardrail_member') memberAssignments.push(strip(item) as unknown as MemberAssignment);
    }
    // An assignment written while its guardrail was being deleted outlives it: it is not one any more.
    const ids = new Set(guardrails.map((guardrail) => guardrail.id));
    return {
      guardrails,
      assignments: assignments.filter((assignment) => ids.has(assignment.guardrail_id)),
      memberAssignments: memberAssignments.filter((assignment) => ids.has(assignment.guardrail_id)),
    };
  }

  /** Assigns the members (already checked to be the organization's); the number newly assigned. */
  async assignMembers(orgId: string, guardrailId: string, userIds: string[], assignedBy: string | null, now: string): Promise<number> {
    const { memberAssignments } = await this.policy(orgId, true);
    const have = new Set(memberAssignments.filter((entry) => entry.guardrail_id === guardrailId).map((entry) => entry.user_id));
    const fresh = [...new Set(userIds)].filter((userId) => !have.has(userId));
    await this.batchWrite(fresh.map((userId) => ({
      PutRequest: {
        Item: {
          ...itemKeys.guardrailMember(orgId, guardrailId, userId), type: 'guardrail_member',
          id: randomUUID(), guardrail_id: guardrailId, user_id: userId, organization_id: orgId, assigned_by: assignedBy, created_at: now,
        } satisfies Record<string, unknown> & MemberAssignment,
      },
    })));
    return fresh.length;
  }

  /** Removes the members' assignments; the number that were assigned. */
  async unassignMembers(orgId: string, guardrailId: string, userIds: string[]): Promise<number> {
    const { memberAssignments } = await this.policy(orgId, true);
    const wanted = new Set(userIds);
    const gone = memberAssignments.filter((entry) => entry.guardrail_id === guardrailId && wanted.has(entry.user_id));
    await this.batchWrite(gone.map((entry) => ({ DeleteRequest: { Key: itemKeys.guardrailMember(orgId, guardrailId, entry.user_id) } })));
    return gone.length;
  }

  /** Assigns the keys (already checked to be the organization's); the number newly assigned. */
  async assignKeys(orgId: string, guardrailId: string, keys: Array<{ hash: string; name: string; label: string }>, assignedBy: string | null, now: string): Promise<number> {
    const { assignments } = await this.policy(orgId, true);
    const have = new Set(assignments.filter((entry) => entry.guardrail_id === guardrailId).map((entry) => entry.key_hash));
    const fresh = keys.filter((key, index) => !have.has(key.hash) && keys.findIndex((other) => other.hash === key.hash) === index);
    await this.batchWrite(fresh.map((key) => ({
      PutRequest: {
        Item: {
          ...itemKeys.guardrailKey(orgId, guardrailId, key.hash), type: 'guardrail_key',
          id: randomUUID(), guardrail_id: guardrailId, key_hash: key.hash, key_name: key.name, key_label: key.label, assigned_by: assignedBy, created_at: now,
        } satisfies Record<string, unknown> & KeyAssignment,
      },
    })));
    return fresh.length;
  }

  /** Removes the keys' assignments; the number that were assigned. */
  async unassignKeys(orgId: string, guardrailId: string, hashes: string[]): Promise<number> {
    const { assignments } = await this.policy(orgId, true);
    const wanted = new Set(hashes);
    const gone = assignments.filter((entry) => entry.guardrail_id === guardrailId && wanted.has(entry.key_hash));
    await this.batchWrite(gone.map((entry) => ({ DeleteRequest: { Key: itemKeys.guardrailKey(orgId, guardrailId, entry.key_hash) } })));
    return gone.length;
  }

  /** Removes every assignment of a key that was deleted. */
  async forget(orgId: string, gone: { keyHash: string }): Promise<void> {
    const { assignments } = await this.policy(orgId, true);
    await this.batchWrite(assignments.filter((entry) => entry.key_hash === gone.keyHash).map((entry) => ({ DeleteRequest: { Key: itemKeys.guardrailKey(orgId, entry.guardrail_id, entry.key_hash) } })));
  }

  /** Deletes the guardrail and its assignments. */
  async delete(orgId: string, id: string): Promise<void> {
    const { assignments, memberAssignments } = await this.policy(orgId, true);
    await this.batchWrite([
      ...assignments.filter((entry) => entry.guardrail_id === id).map((entry) => ({ DeleteRequest: { Key: itemKeys.guardrailKey(orgId, id, entry.key_hash) } })),
      ...memberAssignments.filter((entry) => entry.guardrail_id === id).map((entry) => ({ DeleteRequest: { Key: itemKeys.guardrailMember(orgId, id, entry.user_id) } })),
    ]);
    await this.db.send(new DeleteCommand({ TableName: this.tableName, Key: itemKeys.guardrail(orgId, id) }));
  }

  private async batchWrite(requests: Array<Record<string, unknown>>): Promise<void> {
    for (let start = 0; start < requests.length; start += BATCH_WRITE) {
      let pending: Record<string, Array<Record<string, unknown>>> | undefined = { [this.tableName]: requests.slice(start, start + BATCH_WRITE) };
      // Unprocessed items (throttling) are sent again, a few times with a growing wait.
      for (let round = 0; pending && Object.keys(pending).length; round += 1) {
        if (round >= MAX_ROUNDS) throw new Error(`DynamoDB left ${pending[this.tableName]?.length ?? 0} writes unprocessed after ${MAX_ROUNDS} rounds`);
        if (round > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 20 * 2 ** round)));
        const reply = await this.db.send(new BatchWriteCommand({ RequestItems: pending as never }));
        pending = reply.UnprocessedItems as typeof pending;
      }
    }
  }
}

export interface PolicyRead {
  guardrails: Guardrail[];
  assignments: KeyAssignment[];
  memberAssignments: MemberAssignment[];
}

/** The policy as inference reads it: guardrails by id, by assigned key and by assigned member. */
export function policyOf(read: PolicyRead): GuardrailPolicy {
  const guardrails = new Map(read.guardrails.map((guardrail) => [guardrail.id, guardrail]));
  const index = (entries: Array<{ guardrail_id: string; to: string }>) => {
    const by = new Map<string, Guardrail[]>();
    for (const entry of entries) {
      const guardrail = guardrails.get(entry.guardrail_id);
      if (!guardrail) continue;
      const list = by.get(entry.to);
      if (list) list.push(guardrail);
      else by.set(entry.to, [guardrail]);
    }
    return by;
  };
  return {
    guardrails,
    byKey: index(read.assignments.map((entry) => ({ guardrail_id: entry.guardrail_id, to: entry.key_hash }))),
    byMember: index(read.memberAssignments.map((entry) => ({ guardrail_id: entry.guardrail_id, to: entry.user_id }))),
  };
}
