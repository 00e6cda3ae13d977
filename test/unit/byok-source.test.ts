// ByokSource: an organization's enabled credentials, read once per cache lifetime and given synchronously
// while cached (the BYOK middleware then plans the request without a promise); warm() starts the one read
// that the next ask shares.
import { describe, expect, it } from '@jest/globals';
import { ByokSource } from '../../lambdas/byok/byok-source.js';
import type { ByokRepository } from '../../lambdas/byok/byok-repository.js';
import type { ByokCredential } from '../../lambdas/byok/types.js';
import type { Vault } from '../../lambdas/vault/index.js';

const credential = (id: string, disabled = false) => ({ id, org_id: 'org-1', disabled }) as ByokCredential;

function sourceOver(stored: ByokCredential[]) {
  let reads = 0;
  const repository = { list: async () => { reads += 1; return stored; } } as unknown as ByokRepository;
  return { source: new ByokSource(repository, {} as Vault, 60_000), reads: () => reads };
}

describe('ByokSource', () => {
  it('reads the credentials once, leaves out disabled ones, and gives them synchronously while cached', async () => {
    const { source, reads } = sourceOver([credential('a'), credential('b', true)]);
    const first = source.credentialsFor('org-1');
    expect(Array.isArray(first)).toBe(false);
    expect((await first).map((entry) => entry.id)).toEqual(['a']);
    const second = source.credentialsFor('org-1');
    expect(Array.isArray(second)).toBe(true);
    expect((second as ByokCredential[]).map((entry) => entry.id)).toEqual(['a']);
    expect(reads()).toBe(1);
  });

  it('warm() starts the read that the next ask shares', async () => {
    const { source, reads } = sourceOver([credential('a')]);
    source.warm('org-1');
    const asked = source.credentialsFor('org-1');
    expect((await asked).map((entry) => entry.id)).toEqual(['a']);
    expect(reads()).toBe(1);
  });
});
