// The keys feature as other folders see it: API keys (the record, its repository and cache, the key text's
// format), their wire views, and the key routes.
export type { ApiKey } from './types.js';
export { ApiKeyRepository } from './api-key-repository.js';
export { KeyCache } from './key-cache.js';
export { hashKey, hashesEqual } from './key-format.js';
export { newApiKey } from './new-key.js';
export { keyView, usageFields } from './key-view.js';
export { limitUsageFields } from './schemas.js';
export { keyRoutes, type KeyOperations } from './routes.js';
export { createKeyOperations, type KeyPorts } from './operations.js';
export { authenticate, createAuthenticator, type AuthDeps, MANAGEMENT_ONLY_MESSAGE, NO_INFERENCE_FOR_MANAGEMENT_MESSAGE, MULTIPLE_CREDENTIALS_MESSAGE, REGULAR_KEYS_ONLY_MESSAGE } from './authenticate.js';
export { keyFromItem } from './api-key-item.js';
