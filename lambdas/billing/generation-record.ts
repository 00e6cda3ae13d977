// The generation record: the event a finished request leaves behind (written in a page, pages.ts), and its
// codec. The generations feature reads them back.
import type { InfrastructureCost } from './infrastructure.js';
import type { CostBreakdown } from './cost.js';
import type { Usage, FinishReason } from '../providers/types.js';
import { nanosFromStore, nanosToStore, type Nanos } from '../platform/money.js';
import type { MeterCharge } from './spend-meters.js';

export interface GenerationRecord {
  id: string;
  org_id: string;
  workspace_id: string;
  key_hash: string;
  model: string;
  provider: string;
  upstream_model: string;
  provider_id: string | null;
  api: 'chat' | 'responses' | 'messages' | 'embeddings' | 'speech';
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
  /** Meters beyond the key's and workspace's its spend counts on (an end user's, a member's): spend-meters.ts. */
  spend_meters?: MeterCharge[];
  /** What serving it cost on AWS; recorded just after settlement, absent until then. */
  infra?: InfrastructureCost | null;
}

/** An infrastructure cost's amounts (atto-dollars); its other fields are counts and names. */
type InfraAmount = 'lambda_compute' | 'lambda_request' | 'lambda_streaming' | 'dynamodb' | 'kms' | 'total';

/** How an amount is stored: a DynamoDB number by default (nanosToStore); a page's JSON passes its own. */
type StoreAmount = (nanos: Nanos) => number | bigint | string;

// The codecs below copy with Object.assign and name every amount, instead of `{ ...x, ...Object.fromEntries(…) }`:
// under Node 20 a literal that opens with a spread makes each later field a slow property definition
// (README, "Hot-path style"), and settlement encodes every record.

export function infrastructureToItem(cost: InfrastructureCost, amount: StoreAmount = nanosToStore): Record<string, unknown> {
  return Object.assign<Record<string, unknown>, InfrastructureCost, Record<string, unknown>>({}, cost, mapInfraAmounts(cost, amount));
}

/** The amounts of an infrastructure cost through `amount`: to how they are stored, or back. */
function mapInfraAmounts<From, To>(cost: Record<InfraAmount, From>, amount: (value: From) => To): Record<InfraAmount, To> {
  return {
    lambda_compute: amount(cost.lambda_compute),
    lambda_request: amount(cost.lambda_request),
    lambda_streaming: amount(cost.lambda_streaming),
    dynamodb: amount(cost.dynamodb),
    kms: amount(cost.kms),
    total: amount(cost.total),
  };
}

/** How a stored amount is read back: a DynamoDB number by default (nanosFromStore); a page's JSON passes its own. */
type ReadAmount = (value: unknown) => Nanos;

export function infrastructureFromItem(value: unknown, amount: ReadAmount = nanosFromStore): InfrastructureCost | null {
  if (!value || typeof value !== 'object') return null;
  const item = value as Record<string, unknown>;
  return Object.assign({}, item as unknown as InfrastructureCost, mapInfraAmounts(item as Record<InfraAmount, unknown>, amount));
}

type CostField = keyof CostBreakdown;

/** A record's stored attributes: amounts as DynamoDB numbers by default (a legacy GEN#<id> item, a page of lists of maps); a page's JSON passes its own. */
export function recordToAttributes(record: GenerationRecord, amount: StoreAmount = nanosToStore, withInfra = true): Record<string, unknown> {
  return Object.assign<Record<string, unknown>, GenerationRecord, Record<string, unknown>>({}, record, {
    cost: mapCost(record.cost, amount),
    reserved: amount(record.reserved),
    infra: withInfra && record.infra ? infrastructureToItem(record.infra, amount) : undefined,
  });
}

/** Every amount of a cost breakdown through `amount`: to how it is stored, or back. */
function mapCost<From, To>(cost: Record<CostField, From>, amount: (value: From) => To): Record<CostField, To> {
  return {
    prompt: amount(cost.prompt),
    completion: amount(cost.completion),
    cache_read: amount(cost.cache_read),
    cache_write: amount(cost.cache_write),
    reasoning: amount(cost.reasoning),
    request: amount(cost.request),
    total: amount(cost.total),
  };
}

/** The record back from its stored attributes (a page's, or a legacy GEN#<id> item's). */
export function recordFromAttributes(item: Record<string, unknown>, amount: ReadAmount = nanosFromStore): GenerationRecord {
  const cost = item.cost as Record<CostField, unknown>;
  const { pk: _pk, sk: _sk, gsi1pk: _g1, gsi1sk: _g2, type: _type, ...rest } = item;
  return Object.assign(rest as unknown as GenerationRecord, {
    cost: mapCost(cost, amount),
    reserved: amount(item.reserved),
    usage_estimated: item.usage_estimated === true,
    provider_responses: (item.provider_responses ?? []) as GenerationRecord['provider_responses'],
    infra: infrastructureFromItem(item.infra, amount),
  } satisfies Partial<GenerationRecord>);
}
