// What serving one request cost on AWS: Lambda compute (memory × billed duration × the architecture's
// GB-second price), the per-request fee, response-streaming bytes beyond the free part, DynamoDB request
// units (from ReturnConsumedCapacity) and KMS calls, all at the list prices of the function's region
// (aws-prices.ts). Amounts are integer atto-dollars (1e-18 USD): a request's compute is a few nano-dollars,
// so nano-dollars would keep one or two digits of it.
import { PRICE_TABLE, pricesFor, priceToAttoUsd } from './aws-prices.js';
import { fixedToDecimal } from '../platform/money.js';
import type { Architecture, Invocation } from '../platform/invocation.js';

export { startInvocation, type Architecture, type Invocation } from '../platform/invocation.js';

export interface ResourceUse {
  writeUnits: number;
  readUnits: number;
  kmsRequests: number;
}

export interface InfrastructureCost {
  /** Atto-dollars. */
  lambda_compute: bigint;
  lambda_request: bigint;
  lambda_streaming: bigint;
  dynamodb: bigint;
  kms: bigint;
  total: bigint;
  memory_mb: number;
  architecture: Architecture;
  billed_duration_ms: number;
  init_duration_ms: number | null;
  cold_start: boolean;
  response_bytes: number;
  dynamodb_write_units: number;
  dynamodb_read_units: number;
  kms_requests: number;
  region: string;
  /** The price table used, and whether the region fell back to us-east-1 prices. */
  price_version: string;
  price_fallback: boolean;
}

const GB = 1024n * 1024n * 1024n;
/** Request units can be fractional (0.5 for an eventually consistent read): priced in exact halves. */
const HALVES = 2;

/** The table's prices are a few dozen strings: each is parsed once per process, not once per request. */
const attoPrices = new Map<string, bigint>();

function atto(price: string): bigint {
  let parsed = attoPrices.get(price);
  if (parsed === undefined) {
    parsed = priceToAttoUsd(price);
    attoPrices.set(price, parsed);
  }
  return parsed;
}

/** Exact atto-dollars of `units` at a per-unit price, with `units` given as an integer numerator over `denominator`. */
function priced(price: string, units: bigint, denominator = 1n): bigint {
  const amount = atto(price) * units;
  return (amount + denominator / 2n) / denominator;
}

export function infrastructureCost(invocation: Invocation, use: ResourceUse, endedAt: number): InfrastructureCost {
  const { prices, fallback } = pricesFor(invocation.region);
  // Lambda bills duration rounded up to the millisecond; since August 2025 the INIT phase of a cold start too.
  const runMs = Math.max(1, Math.ceil(endedAt - invocation.startedAt));
  const billedMs = runMs + (prices.initBilled && invocation.initMs !== null ? Math.ceil(invocation.initMs) : 0);
  // GB-seconds = memoryMb / 1024 × billedMs / 1000.
  const lambda_compute = priced(prices.lambdaGbSecond[invocation.architecture], BigInt(invocation.memoryMb) * BigInt(billedMs), 1024n * 1000n);
  const lambda_request = atto(prices.lambdaRequest);
  const streamed = BigInt(Math.max(0, invocation.responseBytes - prices.lambdaStreamingFreeBytes));
  const lambda_streaming = priced(prices.lambdaStreamingGb, streamed, GB);
  const writeHalves = BigInt(Math.round(use.writeUnits * HALVES));
  const readHalves = BigInt(Math.round(use.readUnits * HALVES));
  const dynamodb = priced(prices.dynamodbWriteRequestUnit, writeHalves, BigInt(HALVES)) + priced(prices.dynamodbReadRequestUnit, readHalves, BigInt(HALVES));
  const kms = atto(prices.kmsRequest) * BigInt(use.kmsRequests);
  return {
    lambda_compute,
    lambda_request,
    lambda_streaming,
    dynamodb,
    kms,
    total: lambda_compute + lambda_request + lambda_streaming + dynamodb + kms,
    memory_mb: invocation.memoryMb,
    architecture: invocation.architecture,
    billed_duration_ms: billedMs,
    init_duration_ms: invocation.initMs,
    cold_start: invocation.coldStart,
    response_bytes: invocation.responseBytes,
    dynamodb_write_units: use.writeUnits,
    dynamodb_read_units: use.readUnits,
    kms_requests: use.kmsRequests,
    region: invocation.region,
    price_version: PRICE_TABLE.version,
    price_fallback: fallback,
  };
}

/** Exact decimal USD text of an atto-dollar amount ("0.000000012345"). */
export const attoToDecimal = (atto: bigint): string => fixedToDecimal(atto, 18);

export const attoToUsd = (atto: bigint): number => Number(attoToDecimal(atto));

/** Nano-dollars (the unit of every other amount) in atto-dollars. */
export const nanosToAtto = (nanos: bigint): bigint => nanos * 1_000_000_000n;
