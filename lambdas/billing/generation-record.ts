// The generation record: the event a finished request leaves behind (written by the settlement
// transaction, LedgerRepository.settle), and its item codec. The generations feature reads them back.
import { itemKeys } from '../platform/dynamo/item-keys.js';
import type { InfrastructureCost } from './infrastructure.js';
import type { CostBreakdown } from './cost.js';
import type { Usage, FinishReason } from '../providers/types.js';
import { nanosFromStore, nanosToStore, type Nanos } from '../platform/money.js';

export interface GenerationRecord {
  id: string;
  org_id: string;
  workspace_id: string;
  key_hash: string;
  model: string;
  provider: string;
  upstream_model: string;
  provider_id: string | null;
  api: 'chat' | 'responses';
  streamed: boolean;
  status: 'completed' | 'incomplete' | 'error' | 'cancelled';
  finish_reason: FinishReason | null;
  native_finish_reason: string | null;
  usage: Usage;
  cost: CostBreakdown;
  is_byok: boolean;
  service_tier: string | null;
  attempts: number;
  created_at: string;
  latency_ms: number;
  first_token_ms: number | null;
  generation_time_ms: number;
  session_id: string | null;
  /** Hash of the end-user id; the raw id is never stored. */
  user_hash: string | null;
  error: { status: number; message: string } | null;
  /** What was held for the request before the provider call. */
  reserved: Nanos;
  /** The provider reported no usage (the stream was cut short): tokens and cost are estimates. */
  usage_estimated: boolean;
  /** Every provider attempt, in order (failed ones first). */
  provider_responses: Array<{ provider: string; model: string; status: number | null }>;
  /** What serving it cost on AWS; recorded just after settlement, absent until then. */
  infra?: InfrastructureCost | null;
}

const INFRA_AMOUNTS = ['lambda_compute', 'lambda_request', 'lambda_streaming', 'dynamodb', 'kms', 'total'] as const;

export function infrastructureToItem(cost: InfrastructureCost): Record<string, unknown> {
  return { ...cost, ...Object.fromEntries(INFRA_AMOUNTS.map((field) => [field, nanosToStore(cost[field])])) };
}

export function infrastructureFromItem(value: unknown): InfrastructureCost | null {
  if (!value || typeof value !== 'object') return null;
  const item = value as Record<string, unknown>;
  return { ...(item as unknown as InfrastructureCost), ...Object.fromEntries(INFRA_AMOUNTS.map((field) => [field, nanosFromStore(item[field])])) };
}

export const COST_FIELDS = ['prompt', 'completion', 'cache_read', 'cache_write', 'reasoning', 'request', 'total'] as const;

export function generationToItem(record: GenerationRecord): Record<string, unknown> {
  return {
    ...itemKeys.generation(record.id),
    ...itemKeys.generationListing(record.org_id, record.created_at, record.id),
    type: 'generation',
    ...record,
    cost: Object.fromEntries(COST_FIELDS.map((field) => [field, nanosToStore(record.cost[field])])),
    reserved: nanosToStore(record.reserved),
    infra: record.infra ? infrastructureToItem(record.infra) : undefined,
  };
}

