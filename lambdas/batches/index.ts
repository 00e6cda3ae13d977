// The batches feature: what other modules may use.
export { batchRoutes, type BatchOperations } from './routes.js';
export { createBatchOperations, type BatchPorts } from './operations.js';
export { BatchRepository, NO_USAGE, type BatchRecord, type BatchShape, type BatchUsage, type ProviderBatchRef, type BatchLeaseRef, type StoredPricing } from './batch-repository.js';
export { MAX_PROVIDER_BATCH_ITEMS, type ProviderBatchPort, type BatchLeasePort } from './provider-port.js';
export { BatchResultRepository } from './result-repository.js';
export { BatchUploadRepository } from './upload-repository.js';
export { BatchObjects } from './batch-objects.js';
export { SqsBatchQueue, parseBatchMessage, type BatchQueue, type BatchMessage } from './batch-queue.js';
export { StepFunctionsExecutions, type BatchExecutions } from './executions.js';
export { batchStateMachineDefinition, BATCH_STATES, type BatchStepInput, type BatchStepOutput } from './state-machine.js';
export { BatchWorker, ItemBusyError, NotYetError, type BatchItem, type ItemRunner, type BatchWorkerPorts } from './worker.js';
export type { BatchResult } from './schemas.js';
export type { BatchEndpoint } from './input.js';
