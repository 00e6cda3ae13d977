// The route groups of the API contract (the public OpenRouter API with this project's names), route by
// route. `npm run docs` checks each against the route table, so the coverage table in docs/API.md says
// which groups are served today and which still answer 404.
import type { HttpMethod } from '../../lambdas/platform/http/route.js';

export interface ContractGroup {
  group: string;
  routes: ReadonlyArray<readonly [HttpMethod, string]>;
}

const crud = (base: string, item: string): Array<[HttpMethod, string]> => [
  ['GET', base], ['POST', base], ['GET', item], ['PATCH', item], ['DELETE', item],
];

export const contractGroups: readonly ContractGroup[] = [
  { group: 'Chat completions', routes: [['POST', '/chat/completions']] },
  { group: 'Responses', routes: [['POST', '/responses']] },
  { group: 'Text to speech', routes: [['POST', '/audio/speech']] },
  { group: 'Presets', routes: [['POST', '/presets/{slug}/messages']] },
  { group: 'Batches', routes: [['GET', '/batches/{id}']] },
  {
    group: 'Models and providers',
    routes: [['GET', '/models'], ['GET', '/models/user'], ['GET', '/models/count'], ['GET', '/models/{author}/{slug}'], ['GET', '/models/{author}/{slug}/endpoints'], ['GET', '/providers']],
  },
  {
    group: 'Vault',
    routes: [
      ['GET', '/vault/secrets'], ['GET', '/vault/secrets/{name}'], ['PUT', '/vault/secrets/{name}'], ['DELETE', '/vault/secrets/{name}'],
      ['GET', '/vault/interns/{internId}/secrets'], ['PUT', '/vault/interns/{internId}/secrets/{name}'], ['POST', '/vault/interns/{internId}/secrets/copy'],
      ['GET', '/vault/interns/{internId}/effective-secrets'],
    ],
  },
  { group: 'Interns', routes: [...crud('/interns', '/interns/{internId}'), ['POST', '/interns/{internId}/provision'], ['POST', '/interns/{internId}/suspend']] },
  { group: 'API keys', routes: [...crud('/keys', '/keys/{hash}'), ['GET', '/key']] },
  { group: 'Organization settings', routes: [['GET', '/organization/settings'], ['PATCH', '/organization/settings']] },
  { group: 'Organization members', routes: [['GET', '/organization/members']] },
  { group: 'Credits', routes: [['GET', '/credits']] },
  { group: 'Generations', routes: [['GET', '/generation'], ['POST', '/generation/feedback']] },
  { group: 'Analytics', routes: [['GET', '/activity'], ['GET', '/analytics/meta'], ['POST', '/analytics/query']] },
  { group: 'BYOK', routes: crud('/byok', '/byok/{id}') },
  {
    group: 'Workspaces and budgets',
    routes: [
      ...crud('/workspaces', '/workspaces/{id}'),
      ['GET', '/workspaces/{id}/budgets'], ['GET', '/workspaces/{id}/budgets/{interval}'], ['PUT', '/workspaces/{id}/budgets/{interval}'], ['DELETE', '/workspaces/{id}/budgets/{interval}'],
    ],
  },
  { group: 'Workspace members', routes: [['GET', '/workspaces/{id}/members'], ['POST', '/workspaces/{id}/members/add'], ['POST', '/workspaces/{id}/members/remove']] },
  { group: 'End users', routes: crud('/end-users', '/end-users/{user}') },
  {
    group: 'Guardrails',
    routes: [
      ...crud('/guardrails', '/guardrails/{id}'),
      ['GET', '/guardrails/{id}/assignments/keys'], ['POST', '/guardrails/{id}/assignments/keys'], ['POST', '/guardrails/{id}/assignments/keys/remove'],
      ['GET', '/guardrails/{id}/assignments/members'], ['POST', '/guardrails/{id}/assignments/members'], ['POST', '/guardrails/{id}/assignments/members/remove'],
      ['GET', '/guardrails/assignments/keys'], ['GET', '/guardrails/assignments/members'],
    ],
  },
  { group: 'Observability', routes: crud('/observability/destinations', '/observability/destinations/{id}') },
  {
    group: 'Private endpoints',
    routes: [
      ...crud('/private-endpoints', '/private-endpoints/{id}'),
      ['POST', '/private-endpoints/{id}/activate'], ['POST', '/private-endpoints/{id}/disable'], ['POST', '/private-endpoints/{id}/enable'],
      ['POST', '/private-endpoints/{id}/validate'], ['PUT', '/private-endpoints/{id}/pricing'],
    ],
  },
  {
    group: 'SCIM',
    routes: [...crud('/scim/group-mappings', '/scim/group-mappings/{id}'), ['GET', '/scim/groups'], ['POST', '/scim/sync-jobs'], ['GET', '/scim/sync-jobs/{id}']],
  },
];
