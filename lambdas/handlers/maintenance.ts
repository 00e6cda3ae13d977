// Scheduled maintenance (EventBridge, every 5 minutes on AWS; every minute under npm start): releases
// credit holds whose invocation ended without settling them (a crash, a timeout), and gives back the unspent
// part of leases whose owner did not (a process that died or went idle for good), once they have expired,
// so no balance, key limit or budget stays blocked by a request or a process that will never finish.
import { createDocumentClient, storeConfigFromEnv } from '../platform/dynamo/client.js';
import { createLedger } from '../app/engine-deps.js';
import type { Ledger } from '../billing/ledger.js';
import { consoleLogger, type Logger } from '../platform/logger.js';

let ledger: Ledger | undefined;
const stdout = consoleLogger();

export async function sweepExpired(target: Ledger, log: Logger): Promise<{ released: number; leases: number }> {
  const released = await target.releaseExpired();
  const leases = await target.sweepLeases();
  log.info('expired holds and leases released', { released, leases });
  return { released, leases };
}

export const handler = async (): Promise<{ released: number; leases: number }> => {
  if (!ledger) {
    const config = storeConfigFromEnv();
    ledger = createLedger(createDocumentClient(config), config.tableName, { log: stdout });
  }
  return sweepExpired(ledger, stdout);
};
