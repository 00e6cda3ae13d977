// Every access pattern of the single table, readable in one place.
//
//   entity          pk                 sk                 gsi1pk                 gsi1sk
//   organization    ORG#<org>          ORG
//   workspace       ORG#<org>          WS#<workspace>
//   api key         KEY#<hash>         KEY                ORG#<org>#KEYS         <created_at>#<hash>
//   generation      GEN#<id>           GEN                ORG#<org>#GENS         <created_at>#<id>
//   default org     SYSTEM             DEFAULT_ORGANIZATION
export const itemKeys = {
  organization: (orgId: string) => ({ pk: `ORG#${orgId}`, sk: 'ORG' }),
  workspace: (orgId: string, workspaceId: string) => ({ pk: `ORG#${orgId}`, sk: `WS#${workspaceId}` }),
  workspacesOf: (orgId: string) => ({ pk: `ORG#${orgId}`, skPrefix: 'WS#' }),
  apiKey: (hash: string) => ({ pk: `KEY#${hash}`, sk: 'KEY' }),
  apiKeyListing: (orgId: string, createdAt: string, hash: string) => ({ gsi1pk: `ORG#${orgId}#KEYS`, gsi1sk: `${createdAt}#${hash}` }),
  apiKeysOf: (orgId: string) => ({ gsi1pk: `ORG#${orgId}#KEYS` }),
  generation: (id: string) => ({ pk: `GEN#${id}`, sk: 'GEN' }),
  generationListing: (orgId: string, createdAt: string, id: string) => ({ gsi1pk: `ORG#${orgId}#GENS`, gsi1sk: `${createdAt}#${id}` }),
  defaultOrganization: () => ({ pk: 'SYSTEM', sk: 'DEFAULT_ORGANIZATION' }),
} as const;
