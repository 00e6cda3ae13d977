// BYOK in routing: for each candidate endpoint whose provider has usable BYOK credentials, the customer's
// credentials come first (ascending sort_order), then the gateway's own endpoint, then credentials marked
// is_fallback. is_required drops the gateway's own endpoint for the models the credential applies to;
// is_byok_only drops it for every model of that provider. A credential applies when it is enabled, global
// or for the caller's workspace, and its model, key and user allowlists (when set) include the request's.
import type { Candidate } from '../inference/routing.js';
import type { ByokCredential } from './types.js';

export interface ByokContext {
  workspaceId: string;
  keyHash: string;
  user: string | undefined;
}

function inScope(credential: ByokCredential, context: ByokContext): boolean {
  return (credential.workspace_id === null || credential.workspace_id === context.workspaceId)
    && (credential.allowed_api_key_hashes === null || credential.allowed_api_key_hashes.includes(context.keyHash))
    && (credential.allowed_user_ids === null || (context.user !== undefined && credential.allowed_user_ids.includes(context.user)));
}

const byokCandidate = (candidate: Candidate, credential: ByokCredential): Candidate => ({
  ...candidate,
  key: `${candidate.key}#byok:${credential.id}`,
  byok: credential,
});

export function withByokCandidates(candidates: Candidate[], credentials: ByokCredential[], context: ByokContext): Candidate[] {
  if (credentials.length === 0) return candidates;
  const out: Candidate[] = [];
  for (const candidate of candidates) {
    // Bedrock endpoints run on the function's own AWS role: there is no key of the customer's to put in.
    if (candidate.endpoint.adapter === 'bedrock') {
      out.push(candidate);
      continue;
    }
    const provider = candidate.endpoint.provider;
    const scoped = credentials.filter((credential) => credential.provider === provider && inScope(credential, context));
    const applying = scoped.filter((credential) => credential.allowed_models === null || credential.allowed_models.includes(candidate.endpoint.model));
    const bySort = (a: ByokCredential, b: ByokCredential) => a.sort_order - b.sort_order || a.created_at.localeCompare(b.created_at);
    const first = applying.filter((credential) => !credential.is_fallback).sort(bySort);
    const last = applying.filter((credential) => credential.is_fallback).sort(bySort);
    const sharedAllowed = !applying.some((credential) => credential.is_required) && !scoped.some((credential) => credential.is_byok_only);
    out.push(...first.map((credential) => byokCandidate(candidate, credential)));
    if (sharedAllowed) out.push(candidate);
    out.push(...last.map((credential) => byokCandidate(candidate, credential)));
  }
  return out;
}
