// Scheduled maintenance (EventBridge, every 5 minutes on AWS; every minute under npm start): releases
// credit holds whose invocation ended without settling them (a crash, a timeout), so no balance, key limit
// or budget stays blocked by a request that will never finish.
import { createDocumentClient, storeConfigFromEnv } from '../platform/dynamo/client.js';
import { createLedger } from '../app/engine-deps.js';
import type { Ledger } from '../billing/ledger.js';
import { consoleLogger, type Logger } from '../platform/logger.js';

let ledger: Ledger | undefined;
const stdout = consoleLogger();

export async function releaseExpiredHolds(target: Ledger, log: Logger): Promise<{ released: number }> {
  const released = await target.releaseExpired();
  log.info('expired holds released', { released });
  return { released };
}

export const handler = async (): Promise<{ released: number }> => {
  if (!ledger) {
    const config = storeConfigFromEnv();
    ledger = createLedger(createDocumentClient(config), config.tableName, { log: stdout });
  }
  return releaseExpiredHolds(ledger, stdout);
};
