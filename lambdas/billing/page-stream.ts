// Which stream records reach the meter aggregator, and how they are batched: one filter pattern, in the
// syntax of a Lambda event source mapping's FilterCriteria, which the CDK stack deploys as it is and npm
// start's stream feeder evaluates with matchesPageFilter, so the two cannot disagree.
import type { DynamoDBRecord } from 'aws-lambda';
import { itemKeys } from '../platform/dynamo/item-keys.js';

/** Generation-record pages live in partitions `GENS#<block>` under sort keys `P#<seq>` (item-keys.ts). */
export const PAGE_KEY_PREFIX = itemKeys.pagesOf('').pk;
export const PAGE_SORT_PREFIX = itemKeys.pageSortPrefix;

/** A value rule: an exact string, or `{ prefix }` (the two FilterCriteria operators the pattern uses). */
export type FilterRule = string | { readonly prefix: string };

/** A FilterCriteria pattern: each field either matches one of its rules or is an object matched field by field. */
export interface FilterPattern {
  readonly [field: string]: FilterPattern | readonly FilterRule[];
}

/**
 * New pages only: a page is written once and then never changes, so MODIFY and REMOVE records (and the
 * partition's `APPLIED` marker, whose sort key is not `P#…`) never reach the aggregator.
 */
export const PAGE_FILTER_PATTERN = {
  eventName: ['INSERT'],
  dynamodb: {
    Keys: {
      pk: { S: [{ prefix: PAGE_KEY_PREFIX }] },
      sk: { S: [{ prefix: PAGE_SORT_PREFIX }] },
    },
  },
} as const satisfies FilterPattern;

/**
 * The event source mapping's batching and error handling, shared by the CDK stack and npm start.
 *
 * Lag budget: a page should reach the meters within 1 s. The batching window is whole seconds on AWS, so
 * any window at all would spend that budget alone while the mapping polls each shard four times a second:
 * the window is 0 and a batch is whatever has arrived, up to 100 records. Pages already gather many records
 * per item, so larger batches would save few invocations, while each page in a batch waits for the ones
 * before it: 100 keeps a backlog's batches short. A failing page is retried (once bisection has isolated
 * it) many times, since its records are money: a store outage of many minutes passes without loss. Only a
 * page that fails that often goes to the on-failure destination instead of holding up its shard for good; it
 * stays in the table (an operator can apply it again), and the spend it claimed of its lease is given back
 * when the lease is closed, two days after its return (ledger.ts, LEASE_SETTLE_MS).
 */
export const PAGE_STREAM_SETTINGS = {
  batchSize: 100,
  maxBatchingWindowSeconds: 0,
  retryAttempts: 100,
} as const;

/**
 * Whether `value` matches `pattern` as Lambda's event filtering decides it: every field of the pattern is
 * present, an object field matches field by field, a rule list matches when any rule matches the value.
 */
export function matchesFilterPattern(pattern: FilterPattern, value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const fields = value as Record<string, unknown>;
  return Object.entries(pattern).every(([field, rule]) => {
    const actual = fields[field];
    if (!Array.isArray(rule)) return matchesFilterPattern(rule as FilterPattern, actual);
    return (rule as readonly FilterRule[]).some((one) => (typeof one === 'string'
      ? actual === one
      : typeof actual === 'string' && actual.startsWith(one.prefix)));
  });
}

/** The record as Lambda would filter it: a new page. */
export function matchesPageFilter(record: DynamoDBRecord): boolean {
  return matchesFilterPattern(PAGE_FILTER_PATTERN, record);
}
