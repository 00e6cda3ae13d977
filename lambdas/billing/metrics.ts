// One CloudWatch Embedded Metric Format line per generation: CloudWatch Logs turns it into metrics (by
// model, by provider, and overall) with no agent and no PutMetricData calls, so cost dashboards and alarms
// work from the function's log group alone. High-cardinality ids ride along as properties, not dimensions.
// UpstreamCostUSD is the provider's price of the generation; for BYOK (is_byok) the customer pays it directly.
import type { GenerationRecord } from './generation-record.js';
import { nanosToUsd } from '../platform/money.js';
import { attoToUsd, type InfrastructureCost } from './infrastructure.js';
import type { Logger } from '../platform/logger.js';

export const METRICS_NAMESPACE = 'ModelGateway';

const METRICS = [
  { Name: 'Requests', Unit: 'Count' },
  { Name: 'UpstreamCostUSD', Unit: 'None' },
  { Name: 'InfrastructureCostUSD', Unit: 'None' },
  { Name: 'LambdaComputeCostUSD', Unit: 'None' },
  { Name: 'DynamoDBCostUSD', Unit: 'None' },
  { Name: 'PromptTokens', Unit: 'Count' },
  { Name: 'CompletionTokens', Unit: 'Count' },
  { Name: 'ReasoningTokens', Unit: 'Count' },
  { Name: 'Latency', Unit: 'Milliseconds' },
  { Name: 'TimeToFirstToken', Unit: 'Milliseconds' },
  { Name: 'BilledDuration', Unit: 'Milliseconds' },
  { Name: 'ColdStart', Unit: 'Count' },
  { Name: 'Errors', Unit: 'Count' },
] as const;

/** Every EMF line starts so (JSON.stringify keeps the key order of emfLine's object). */
const EMF_PREFIX = '{"_aws":';

/**
 * Whether a log line is a metrics line. On Lambda every line goes to CloudWatch Logs as it is; the local
 * runtime's log sink uses this to keep them off the console (they belong in a file there, if anywhere).
 */
export function isEmfLine(line: string): boolean {
  return line.startsWith(EMF_PREFIX);
}

/**
 * Where each stored generation's metrics go. On Lambda: one EMF line in the function's log (emfMetrics). The
 * local runtime's console shows a request's model and cost instead, and writes EMF lines only where asked.
 */
export type GenerationMetrics = (record: GenerationRecord, timestamp: number) => void;

export function emfMetrics(log: Pick<Logger, 'raw'>): GenerationMetrics {
  return (record, timestamp) => log.raw(emfLine(record, record.infra ?? undefined, timestamp));
}

export function emfLine(record: GenerationRecord, infra: InfrastructureCost | undefined, timestamp: number): string {
  return JSON.stringify({
    _aws: {
      Timestamp: timestamp,
      CloudWatchMetrics: [{ Namespace: METRICS_NAMESPACE, Dimensions: [['Model'], ['Provider'], []], Metrics: METRICS }],
    },
    Model: record.model,
    Provider: record.provider,
    Requests: 1,
    UpstreamCostUSD: nanosToUsd(record.cost.total),
    InfrastructureCostUSD: infra ? attoToUsd(infra.total) : 0,
    LambdaComputeCostUSD: infra ? attoToUsd(infra.lambda_compute) : 0,
    DynamoDBCostUSD: infra ? attoToUsd(infra.dynamodb) : 0,
    PromptTokens: record.usage.input_tokens,
    CompletionTokens: record.usage.output_tokens,
    ReasoningTokens: record.usage.reasoning_tokens,
    Latency: record.latency_ms,
    TimeToFirstToken: record.first_token_ms ?? 0,
    BilledDuration: infra?.billed_duration_ms ?? 0,
    ColdStart: infra?.cold_start ? 1 : 0,
    Errors: record.status === 'error' ? 1 : 0,
    generation_id: record.id,
    org_id: record.org_id,
    workspace_id: record.workspace_id,
    key_hash: record.key_hash,
    status: record.status,
    is_byok: record.is_byok,
    streamed: record.streamed,
  });
}
