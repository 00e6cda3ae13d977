// Every access pattern of the single table, readable in one place.
//
//   entity          pk                 sk                 gsi1pk                 gsi1sk
//   organization    ORG#<org>          ORG
//   workspace       ORG#<org>          WS#<workspace>
//   api key         KEY#<hash>         KEY                ORG#<org>#KEYS         <created_at>#<hash>
//   generation      GEN#<id>           GEN                ORG#<org>#GENS         <created_at>#<id>   (before pages; read only)
//   page            GENS#<block>       P#<seq>                                                          (generation records: billing/pages.ts)
//   applied marker  GENS#<block>       APPLIED                                                          (seqs of the block's pages the aggregator applied)
//   default org     SYSTEM             DEFAULT_ORGANIZATION
//   workspace slug  ORG#<org>          WSSLUG#<slug>                                                   (uniqueness claim)
//   credit grant    ORG#<org>          CREDIT#<at>#<id>
//   hold            HOLD#<generation>  HOLD               HOLDS#<shard 0-15>     <expires_at>#<generation>
//   lease           LEASE#<lease>      LEASE              LEASES#<shard 0-15>    <expires_at>#<lease>   (budget leases: billing/leases.ts)
//   feedback        GEN#<id>           FEEDBACK#<at>#<n>
//   rollup          ORG#<org>#RU       <hour>#<ws>#<key hash>#<model>#<provider>  RU#EP#<model>@<provider>  <hour>#<org>#<ws>#<key hash>   (by endpoint: billing/rollups.ts)
//   endpoint fails  EPF#<model>@<provider>  <hour>#<shard 0-7>                                     (failed attempts: catalog/endpoint-failure-repository.ts)
//   intern          ORG#<org>          INTERN#<intern>
//   vault data key  VAULT#<vault>      DATAKEY                                                         (encrypted only)
//   vault secret    VAULT#<vault>      SECRET#<name>
//   vault audit     VAULT#<vault>      AUDIT#<at>#<n>
//   byok credential ORG#<org>          BYOK#<id>
//   batch           BATCH#<id>         BATCH              ORG#<org>#WS#<ws>#BATCHES  <created_at 10 digits>#<id>   (newest first: batches/batch-repository.ts)
//   batch result    BATCH#<id>         R#<line 9 digits>                                                (one per item, in input order: batches/result-repository.ts)
//   batch upload    UPLOAD#<id>        UPLOAD                                                           (a batch input uploaded in parts: batches/upload-repository.ts)
//   member          ORG#<org>          MEMBER#<user id>                                                 (organizations/members.ts)
//   member email    ORG#<org>          MEMBEREMAIL#<email>                                              (uniqueness claim)
//   ws member       ORG#<org>          WSMEMBER#<workspace>#<user id>
//   guardrail       ORG#<org>          GR#<guardrail>                                                   (guardrails/guardrail-repository.ts)
//   guardrail key   ORG#<org>          GRK#<guardrail>#<key hash>                                       (a key assignment; `GR` reads the whole policy)
//   guardrail member ORG#<org>         GRM#<guardrail>#<user id>                                        (a member assignment)
//   preset          PRESETS#<org>#<ws> PRESET#<slug>                                                    (with its designated version inline: presets/preset-repository.ts)
//   preset version  PRESET#<preset>    V#<version 9 digits>                                             (immutable, numbered without gaps)
//   scim user       ORG#<org>          SCIMUSER#<id>                                                    (scim/scim-repository.ts: pushed by the identity provider)
//   scim claim      ORG#<org>          SCIMCLAIM#<userName|email>#<value>                               (a SCIM user's unique userName and email)
//   scim group      ORG#<org>          SCIMGROUP#<id>
//   scim mapping    ORG#<org>          SCIMMAP#<id>                                                     (a group → a workspace, with a role)
//   scim sync job   ORG#<org>          SCIMJOB#<id>
//   private endpoint ORG#<org>         PE#<id>                                                          (private-endpoints/private-endpoint-repository.ts)
//   obs destination ORG#<org>          OBSDEST#<id>                                                     (observability/destination-repository.ts)
//   end user        ORG#<org>          ENDUSER#<user hash>                                              (its registration: which epoch is current; end-users/end-user-repository.ts)
//   end user record ORG#<org>          ENDUSER#<user hash>#<epoch>                                      (its settings and spend meter, one per registration)
//   member meter    ORG#<org>          MEMBERMETER#<user id>                                            (a member's spend, kept while a guardrail limits it)
export const itemKeys = {
  organization: (orgId: string) => ({ pk: `ORG#${orgId}`, sk: 'ORG' }),
  workspace: (orgId: string, workspaceId: string) => ({ pk: `ORG#${orgId}`, sk: `WS#${workspaceId}` }),
  workspacesOf: (orgId: string) => ({ pk: `ORG#${orgId}`, skPrefix: 'WS#' }),
  apiKey: (hash: string) => ({ pk: `KEY#${hash}`, sk: 'KEY' }),
  apiKeyListing: (orgId: string, createdAt: string, hash: string) => ({ gsi1pk: `ORG#${orgId}#KEYS`, gsi1sk: `${createdAt}#${hash}` }),
  apiKeysOf: (orgId: string) => ({ gsi1pk: `ORG#${orgId}#KEYS` }),
  generation: (id: string) => ({ pk: `GEN#${id}`, sk: 'GEN' }),
  page: (block: string, seq: number) => ({ pk: `GENS#${block}`, sk: `P#${String(seq).padStart(4, '0')}` }),
  pagesOf: (block: string) => ({ pk: `GENS#${block}` }),
  pageSortPrefix: 'P#',
  appliedMarker: (block: string) => ({ pk: `GENS#${block}`, sk: 'APPLIED' }),
  defaultOrganization: () => ({ pk: 'SYSTEM', sk: 'DEFAULT_ORGANIZATION' }),
  workspaceSlug: (orgId: string, slug: string) => ({ pk: `ORG#${orgId}`, sk: `WSSLUG#${slug}` }),
  creditGrant: (orgId: string, at: string, id: string) => ({ pk: `ORG#${orgId}`, sk: `CREDIT#${at}#${id}` }),
  creditGrantsOf: (orgId: string) => ({ pk: `ORG#${orgId}`, skPrefix: 'CREDIT#' }),
  hold: (generationId: string) => ({ pk: `HOLD#${generationId}`, sk: 'HOLD' }),
  holdListing: (shard: number, expiresAt: string, generationId: string) => ({ gsi1pk: `HOLDS#${shard}`, gsi1sk: `${expiresAt}#${generationId}` }),
  holdsOf: (shard: number) => ({ gsi1pk: `HOLDS#${shard}` }),
  lease: (leaseId: string) => ({ pk: `LEASE#${leaseId}`, sk: 'LEASE' }),
  leaseListing: (shard: number, expiresAt: string, leaseId: string) => ({ gsi1pk: `LEASES#${shard}`, gsi1sk: `${expiresAt}#${leaseId}` }),
  leasesOf: (shard: number) => ({ gsi1pk: `LEASES#${shard}` }),
  feedback: (generationId: string, at: string, n: string) => ({ pk: `GEN#${generationId}`, sk: `FEEDBACK#${at}#${n}` }),
  rollup: (orgId: string, hour: string, workspaceId: string, keyHash: string, model: string, provider: string) => ({
    pk: `ORG#${orgId}#RU`, sk: `${hour}#${workspaceId}#${keyHash}#${model}#${provider}`,
  }),
  rollupsOf: (orgId: string) => ({ pk: `ORG#${orgId}#RU` }),
  endpointFailures: (model: string, provider: string, hour: string, shard: number) => ({ pk: `EPF#${model}@${provider}`, sk: `${hour}#${shard}` }),
  endpointFailuresOf: (model: string, provider: string) => ({ pk: `EPF#${model}@${provider}` }),
  intern: (orgId: string, internId: string) => ({ pk: `ORG#${orgId}`, sk: `INTERN#${internId}` }),
  internsOf: (orgId: string) => ({ pk: `ORG#${orgId}`, skPrefix: 'INTERN#' }),
  vaultDataKey: (vaultId: string) => ({ pk: `VAULT#${vaultId}`, sk: 'DATAKEY' }),
  vaultSecret: (vaultId: string, name: string) => ({ pk: `VAULT#${vaultId}`, sk: `SECRET#${name}` }),
  vaultSecretsOf: (vaultId: string) => ({ pk: `VAULT#${vaultId}`, skPrefix: 'SECRET#' }),
  vaultAudit: (vaultId: string, at: string, n: string) => ({ pk: `VAULT#${vaultId}`, sk: `AUDIT#${at}#${n}` }),
  vaultAuditOf: (vaultId: string) => ({ pk: `VAULT#${vaultId}`, skPrefix: 'AUDIT#' }),
  byok: (orgId: string, id: string) => ({ pk: `ORG#${orgId}`, sk: `BYOK#${id}` }),
  byoksOf: (orgId: string) => ({ pk: `ORG#${orgId}`, skPrefix: 'BYOK#' }),
  batch: (id: string) => ({ pk: `BATCH#${id}`, sk: 'BATCH' }),
  batchUpload: (id: string) => ({ pk: `UPLOAD#${id}`, sk: 'UPLOAD' }),
  batchListing: (orgId: string, workspaceId: string, createdAt: number, id: string) => ({ gsi1pk: `ORG#${orgId}#WS#${workspaceId}#BATCHES`, gsi1sk: `${String(createdAt).padStart(10, '0')}#${id}` }),
  batchesOf: (orgId: string, workspaceId: string) => ({ gsi1pk: `ORG#${orgId}#WS#${workspaceId}#BATCHES` }),
  batchResult: (batchId: string, line: number) => ({ pk: `BATCH#${batchId}`, sk: `R#${String(line).padStart(9, '0')}` }),
  batchResultsOf: (batchId: string) => ({ pk: `BATCH#${batchId}`, skPrefix: 'R#' }),
  member: (orgId: string, userId: string) => ({ pk: `ORG#${orgId}`, sk: `MEMBER#${userId}` }),
  memberMeter: (orgId: string, userId: string) => ({ pk: `ORG#${orgId}`, sk: `MEMBERMETER#${userId}` }),
  endUser: (orgId: string, userHash: string) => ({ pk: `ORG#${orgId}`, sk: `ENDUSER#${userHash}` }),
  endUserRecord: (orgId: string, userHash: string, epoch: string) => ({ pk: `ORG#${orgId}`, sk: `ENDUSER#${userHash}#${epoch}` }),
  endUserRecordsOf: (orgId: string, userHash: string) => ({ pk: `ORG#${orgId}`, skPrefix: `ENDUSER#${userHash}#` }),
  endUsersOf: (orgId: string) => ({ pk: `ORG#${orgId}`, skPrefix: 'ENDUSER#' }),
  membersOf: (orgId: string) => ({ pk: `ORG#${orgId}`, skPrefix: 'MEMBER#' }),
  memberEmail: (orgId: string, email: string) => ({ pk: `ORG#${orgId}`, sk: `MEMBEREMAIL#${email}` }),
  workspaceMember: (orgId: string, workspaceId: string, userId: string) => ({ pk: `ORG#${orgId}`, sk: `WSMEMBER#${workspaceId}#${userId}` }),
  workspaceMembersOf: (orgId: string, workspaceId: string) => ({ pk: `ORG#${orgId}`, skPrefix: `WSMEMBER#${workspaceId}#` }),
  /** Every workspace membership of the organization (a member's removal takes them all). */
  allWorkspaceMembersOf: (orgId: string) => ({ pk: `ORG#${orgId}`, skPrefix: 'WSMEMBER#' }),
  guardrail: (orgId: string, id: string) => ({ pk: `ORG#${orgId}`, sk: `GR#${id}` }),
  guardrailKey: (orgId: string, guardrailId: string, keyHash: string) => ({ pk: `ORG#${orgId}`, sk: `GRK#${guardrailId}#${keyHash}` }),
  guardrailMember: (orgId: string, guardrailId: string, userId: string) => ({ pk: `ORG#${orgId}`, sk: `GRM#${guardrailId}#${userId}` }),
  /** Guardrails and their key and member assignments together (every sort key begins with GR). */
  guardrailPolicyOf: (orgId: string) => ({ pk: `ORG#${orgId}`, skPrefix: 'GR' }),
  preset: (orgId: string, workspaceId: string, slug: string) => ({ pk: `PRESETS#${orgId}#${workspaceId}`, sk: `PRESET#${slug}` }),
  presetsOf: (orgId: string, workspaceId: string) => ({ pk: `PRESETS#${orgId}#${workspaceId}`, skPrefix: 'PRESET#' }),
  presetVersion: (presetId: string, version: number) => ({ pk: `PRESET#${presetId}`, sk: `V#${String(version).padStart(9, '0')}` }),
  presetVersionsOf: (presetId: string) => ({ pk: `PRESET#${presetId}`, skPrefix: 'V#' }),
  scim: (orgId: string, kind: 'USER' | 'GROUP' | 'MAP' | 'JOB', id: string) => ({ pk: `ORG#${orgId}`, sk: `SCIM${kind}#${id}` }),
  scimOf: (orgId: string, kind: 'USER' | 'GROUP' | 'MAP' | 'JOB') => ({ pk: `ORG#${orgId}`, skPrefix: `SCIM${kind}#` }),
  scimClaim: (orgId: string, attribute: 'userName' | 'email', value: string) => ({ pk: `ORG#${orgId}`, sk: `SCIMCLAIM#${attribute}#${value.toLowerCase()}` }),
  privateEndpoint: (orgId: string, id: string) => ({ pk: `ORG#${orgId}`, sk: `PE#${id}` }),
  privateEndpointsOf: (orgId: string) => ({ pk: `ORG#${orgId}`, skPrefix: 'PE#' }),
  observabilityDestination: (orgId: string, id: string) => ({ pk: `ORG#${orgId}`, sk: `OBSDEST#${id}` }),
  observabilityDestinationsOf: (orgId: string) => ({ pk: `ORG#${orgId}`, skPrefix: 'OBSDEST#' }),
} as const;
