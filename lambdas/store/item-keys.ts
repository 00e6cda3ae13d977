// Every access pattern of the single table, readable in one place.
//
//   entity          pk                 sk                 gsi1pk                 gsi1sk
//   organization    ORG#<org>          ORG
//   workspace       ORG#<org>          WS#<workspace>
//   api key         KEY#<hash>         KEY                ORG#<org>#KEYS         <created_at>#<hash>
//   local defaults  SYSTEM             LOCAL_DEFAULTS
export const itemKeys = {
  organization: (orgId: string) => ({ pk: `ORG#${orgId}`, sk: 'ORG' }),
  workspace: (orgId: string, workspaceId: string) => ({ pk: `ORG#${orgId}`, sk: `WS#${workspaceId}` }),
  workspacesOf: (orgId: string) => ({ pk: `ORG#${orgId}`, skPrefix: 'WS#' }),
  apiKey: (hash: string) => ({ pk: `KEY#${hash}`, sk: 'KEY' }),
  apiKeyListing: (orgId: string, createdAt: string, hash: string) => ({ gsi1pk: `ORG#${orgId}#KEYS`, gsi1sk: `${createdAt}#${hash}` }),
  apiKeysOf: (orgId: string) => ({ gsi1pk: `ORG#${orgId}#KEYS` }),
  localDefaults: () => ({ pk: 'SYSTEM', sk: 'LOCAL_DEFAULTS' }),
} as const;
