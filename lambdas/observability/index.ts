// The observability feature as other folders see it: destinations (storage, cache, sealed secrets), the
// sending side inference hands finished generations to, the delivering side behind the queue, the routes.
export type { Destination, DestinationType } from './types.js';
export { DestinationRepository } from './destination-repository.js';
export { DestinationSource, DESTINATION_CACHE_TTL_MS } from './destination-source.js';
export { DestinationSecrets } from './destination-secrets.js';
export { ObservabilityOutbox, type DeliveryQueue } from './outbox.js';
export { SqsDeliveryQueue } from './delivery-queue.js';
export { handleDeliveries, backoffSeconds, DELIVERY_MAX_RECEIVES, type DeliveryWorkerDeps } from './delivery-worker.js';
export type { GenerationFacts, DeliveryMessage, DeliveredGeneration } from './event.js';
export { webhookSignature } from './wire-formats.js';
export { observabilityRoutes, type ObservabilityOperations } from './routes.js';
export { createObservabilityOperations, type ObservabilityPorts } from './operations.js';
export { observabilityConfigFromEnv, type ObservabilityConfig } from './config-env.js';
