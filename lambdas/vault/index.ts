// The vault feature as other folders see it: secrets under KMS envelope encryption (the Vault service and
// its repository), the scope rules shared with the intern routes, and the vault routes.
export { Vault, ReleaseRefused } from './vault.js';
export { hostOfUrl } from './hosts.js';
export { VaultRepository } from './vault-repository.js';
export { vaultIdOf, versionedSecretName, type VaultRef } from './envelope.js';
export { callerOf, internOf, internVault, notForInternKeys, NOT_FOUND, type Caller, type InternLookup, type InternRef } from './scope.js';
export { vaultRoutes, internIdParam, type VaultOperations } from './routes.js';
export { createVaultOperations, type VaultPorts } from './operations.js';
export { hostRulesFromEnv, vaultSettingsFromEnv, type HostRules, type VaultSettings } from './settings.js';
