// The catalog feature as other folders see it: the models and their endpoints (the catalog, loaded once per
// process), endpoint failure counts, and the catalog routes.
export type { Catalog, CatalogEndpoint, CatalogModel, EndpointPricing } from './types.js';
export { endpointByKey, endpointKey, SPEECH_ADAPTERS } from './types.js';
export { EndpointFailureRepository } from './endpoint-failure-repository.js';
export { catalogRoutes, type CatalogOperations } from './routes.js';
export { createCatalogOperations, type CatalogPorts } from './operations.js';
export { byokProviders, providerNames } from './providers.js';
export { loadCatalog, catalogOf, catalogConfigFromEnv, type CatalogConfig } from './catalog-config.js';
export { FAILURE_SHARDS } from './endpoint-failure-repository.js';
