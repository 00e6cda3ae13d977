// The vault feature as other folders see it: secrets under KMS envelope encryption (the Vault service and
// its repository, which also stores interns), the scope rules shared with the intern routes, and the vault routes.
export { Vault } from './vault.js';
export { VaultRepository, type Intern, type InternStatus } from './vault-repository.js';
export { vaultIdOf, type VaultRef } from './envelope.js';
export { callerOf, internOf, internVault, notForInternKeys, NOT_FOUND, type Caller } from './scope.js';
export { vaultRoutes, internIdParam, type VaultOperations } from './routes.js';
export { createVaultOperations, type VaultPorts } from './operations.js';
