// The meter aggregator's ports, and only those: the table (meters, rollups, pages' markers) and a logger. Its
// function (and npm start's aggregator thread) then loads neither the inference engine, the provider
// adapters nor the vault, and reads no provider secret at a cold start.
import { setTimeout as delay } from 'node:timers/promises';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient, storeConfigFromEnv } from '../platform/dynamo/client.js';
import { LedgerRepository, type MeteredItemCodecs } from '../billing/ledger-repository.js';
import { AggregatorRepository } from '../billing/aggregator-repository.js';
import { MeterAggregator } from '../billing/aggregator.js';
import { keyFromItem } from '../keys/index.js';
import { workspaceFromItem } from '../organizations/index.js';
import { consoleLogger, Logger } from '../platform/logger.js';

/** What the stream's handler uses (app/aggregator.ts applyPages). */
export interface AggregatorDeps {
  /** Applies pages of generation records to the meters. */
  aggregator: MeterAggregator;
  log: Logger;
}

/** The key and workspace item codecs the ledger reads refused reservations back with. */
export const meteredItemCodecs: MeteredItemCodecs = { keyFromItem, workspaceFromItem };

/** The meter aggregator over this table: pages applied to meters and rollups (billing/aggregator.ts). */
export function createAggregator(db: DynamoDBDocumentClient, tableName: string, wiring: { log?: Logger; clock?: () => Date } = {}): MeterAggregator {
  const ledgerRepository = new LedgerRepository(db, tableName, meteredItemCodecs);
  return new MeterAggregator({
    repository: new AggregatorRepository(db, tableName),
    roll: (meter, periods, stored) => ledgerRepository.roll(meter, periods, stored),
    clock: wiring.clock ?? (() => new Date()),
    random: Math.random,
    sleep: (ms) => delay(ms),
    log: wiring.log ?? consoleLogger(),
  });
}

let shared: AggregatorDeps | undefined;

/** The process-wide aggregator deps, over the table TABLE_NAME (and DYNAMODB_ENDPOINT) name. */
export function defaultAggregatorDeps(): AggregatorDeps {
  if (!shared) {
    const store = storeConfigFromEnv();
    const log = new Logger((line: string) => console.log(line));
    shared = { aggregator: createAggregator(createDocumentClient(store), store.tableName, { log }), log };
  }
  return shared;
}
