// Each organization's guardrail policy as inference reads it, cached per warm function like API keys: a
// request of an organization whose policy is cached reads nothing and waits for nothing (no promise).
import { RecordCache } from '../platform/record-cache.js';
import { policyOf, type GuardrailRepository } from './guardrail-repository.js';
import type { GuardrailPolicy } from './types.js';

export class GuardrailSource {
  private readonly cache: RecordCache<GuardrailPolicy>;
  private readonly load: (orgId: string) => Promise<GuardrailPolicy>;

  constructor(repository: Pick<GuardrailRepository, 'policy'>, ttlMs = 2000) {
    this.cache = new RecordCache<GuardrailPolicy>(ttlMs);
    // Read consistently: a policy changed a moment ago is the one loaded.
    this.load = async (orgId) => policyOf(await repository.policy(orgId, true));
  }

  /** The policy, synchronously when cached. */
  policyFor(orgId: string): GuardrailPolicy | Promise<GuardrailPolicy> {
    return this.cache.fresh(orgId, this.load) ?? this.cache.getOrLoad(orgId, this.load).then((policy) => policy ?? { guardrails: new Map(), byKey: new Map(), byMember: new Map() });
  }

  /** Starts reading the policy when it is not cached (RecordCache.warm). */
  warm(orgId: string): void {
    this.cache.warm(orgId, this.load);
  }

  /** A change written through this process: its next request reads the policy again (other instances within the cache lifetime). */
  invalidate(orgId: string): void {
    this.cache.invalidate(orgId);
  }
}
