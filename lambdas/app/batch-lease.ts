// The lease that covers a batch's maximum cost (the batch worker's BatchLeasePort), and the lease source its
// items reserve from.
//
// When a batch is validated, the sum of what each of its items would reserve live (on the endpoints its
// request routes to; at a provider batch's price, on that endpoint) is taken as one budget lease, checked
// against the organization's credits, the key's limit and the workspace's budgets exactly as a live hold is:
// a batch its key cannot pay for fails before anything runs, saying so. Its items then reserve from that
// lease in memory (always covered: the lease is the sum of their maxima), and each record claims what it
// spent from it. When the batch has ended, what the items did not spend is given back.
import type { CatalogEndpoint } from '../catalog/index.js';
import { endpointByKey } from '../catalog/index.js';
import type { LeaseDraw, LeasePool } from '../billing/leases.js';
import type { EngineDeps } from '../inference/engine.js';
import { reservationFor } from '../inference/estimate.js';
import { planRoute } from '../inference/routing.js';
import { DomainError, InsufficientFundsError, UnavailableError } from '../platform/errors.js';
import { ReservationRefused } from '../billing/errors.js';
import { nanosToDecimal } from '../platform/money.js';
import type { ApiKey, ApiKeyRepository } from '../keys/index.js';
import type { BatchItem, BatchLeasePort, BatchLeaseRef, BatchRecord, BatchShape, StoredPricing } from '../batches/index.js';
import { itemRequest } from './batch-items.js';

/** How long after the batch's deadline its lease may still be used (its last items end by then). */
const LEASE_MARGIN_S = 2 * 60 * 60;

/**
 * The batch's lease as an engine's lease source: an item draws its maximum (covered: the lease is the sum of
 * the maxima), spends what it is charged, up to that, and gives back nothing on its own (the lease's unspent
 * part is given back whole when the batch ends).
 */
export class BatchLease {
  constructor(private readonly leaseId: string) {}

  reserve(_key: unknown, _workspace: unknown, amount: bigint): LeaseDraw {
    return { leaseId: this.leaseId, amount };
  }

  settle(draw: LeaseDraw, charged: bigint): { spent: bigint; stored: () => void } {
    return { spent: charged < 0n ? 0n : charged < draw.amount ? charged : draw.amount, stored: () => undefined };
  }

  release(): void {
    // An item that spends nothing claims nothing.
  }
}

/**
 * The engine an item of a covered batch runs with: it reserves from the batch's lease (settlement asks a lease
 * source for reserve, settle and release only). A batch that could cost nothing took no lease: its items
 * reserve as live requests do.
 */
export function withBatchLease(engine: EngineDeps, lease: BatchLeaseRef): EngineDeps {
  if (lease.id.startsWith(NO_LEASE)) return engine;
  return { ...engine, leases: new BatchLease(lease.id) as unknown as LeasePool };
}

/**
 * Why a batch's maximum cost cannot be covered, naming the limit (as a live request's 402 does): the error
 * of a batch that fails validating, and the message of a 402 at creation.
 */
export function batchRefusal(refused: ReservationRefused): string {
  return `This batch can cost up to $${nanosToDecimal(refused.required)} (every item at its most: set max_tokens to lower it). ${refused.state}. To run it, ${refused.remedy}.`;
}

/** The id prefix of a batch that took no lease (its maximum cost is 0). */
const NO_LEASE = 'none-';

/** An endpoint at stored prices. */
export function pricedAt(endpoint: CatalogEndpoint, pricing: StoredPricing): CatalogEndpoint {
  return { ...endpoint, pricing: Object.fromEntries(Object.entries(pricing).map(([name, price]) => [name, BigInt(price)])) as unknown as CatalogEndpoint['pricing'] };
}

/**
 * The most an item can cost: what it would reserve live (on the endpoints its request routes to), or at a
 * provider batch's price on that endpoint; 0 for an item whose request cannot be made (it fails at no cost).
 */
function itemMaximum(engine: EngineDeps, batch: BatchShape, item: BatchItem, priced?: { endpoint: string; pricing: StoredPricing }): bigint {
  try {
    const request = itemRequest(batch, item);
    if (priced) {
      const endpoint = endpointByKey(engine.catalog, priced.endpoint);
      return endpoint ? reservationFor(request.params, [pricedAt(endpoint, priced.pricing)]) : 0n;
    }
    const plan = planRoute({ request, catalog: engine.catalog, health: engine.health, stickyEndpoint: undefined, now: engine.clock().getTime(), random: engine.random });
    return reservationFor(request.params, plan.candidates.map((candidate) => candidate.endpoint));
  } catch (err) {
    // An item whose request cannot be made or routed fails when it runs, costing nothing.
    if (err instanceof DomainError) return 0n;
    throw err;
  }
}

/**
 * The check at a batch's creation (SPEC: 402 for a balance that cannot cover a batch): a 402 naming the
 * limit when the organization's credits, the key's limit or the workspace's budgets, as they are now,
 * cannot cover the sum of the inline items' maxima at live prices. A batch whose model a provider's batch
 * service may run (priced lower there) or whose input is uploaded (read when validating) is refused here only
 * when nothing at all is left. Nothing is reserved: the lease taken when the batch is validated decides.
 */
export function batchAffordability(engine: EngineDeps): (key: ApiKey, batch: BatchShape, items: readonly BatchItem[] | undefined) => Promise<void> {
  return async (key, batch, items) => {
    const model = batch.model ? engine.catalog.byId.get(batch.model) : undefined;
    // A model free on every endpoint costs nothing, whatever the input (as at validation, no lease is taken).
    if (model && !model.endpoints.some((endpoint) => Object.values(endpoint.pricing).some((price) => price > 0n))) return;
    const whole = items !== undefined && !model?.endpoints.some((endpoint) => endpoint.batch_api);
    let total = 1n;
    if (whole) {
      total = 0n;
      for (const item of items) total += itemMaximum(engine, batch, item);
      if (total === 0n) return;
    }
    const workspace = await engine.ledger.workspaceOf(key.org_id, key.workspace_id);
    const refused = await engine.ledger.refusalOf(key, workspace, total);
    if (!refused) return;
    const message = whole ? batchRefusal(refused) : `This batch cannot run: nothing is left to pay for it. ${refused.state}. To run it, ${refused.remedy}.`;
    // Nothing left: the 1 nano asked for is no figure of the batch's.
    const { required: _required, ...metadata } = refused.metadata ?? {};
    throw new InsufficientFundsError(message, { metadata: whole ? refused.metadata : metadata });
  };
}

export function batchLeases(wiring: { engine: EngineDeps; keys: Pick<ApiKeyRepository, 'get'> }): BatchLeasePort {
  const { engine } = wiring;
  return {
    maximum: (batch, item, priced) => itemMaximum(engine, batch, item, priced),

    async cover(batch: BatchRecord, total: bigint) {
      const key = await wiring.keys.get(batch.key_hash);
      if (!key || key.disabled) return { refused: key ? 'The API key that submitted this batch is disabled' : 'The API key that submitted this batch was deleted' };
      const workspace = await engine.ledger.workspaceOf(key.org_id, key.workspace_id);
      const useUntil = (batch.expires_at + LEASE_MARGIN_S) * 1000;
      const grant = total > 0n ? await engine.ledger.leaseOrRefusal(key, workspace, total, useUntil, `batch:${batch.id}`) : undefined;
      if (grant instanceof ReservationRefused) return { refused: batchRefusal(grant) };
      // Contention that outlasted the retries is no reason to fail the batch: the step is tried again.
      if (grant instanceof UnavailableError) throw grant;
      if (grant instanceof DomainError) return { refused: `The batch cannot be paid for: ${grant.message}` };
      return {
        lease: {
          id: grant?.id ?? `${NO_LEASE}${batch.id}`, org_id: key.org_id, workspace_id: key.workspace_id, key_hash: key.hash, amount: total.toString(),
          settings_version: grant?.settingsVersion ?? key.settings_version, budget_version: grant?.budgetVersion ?? workspace.budget_version, use_until: useUntil, returned: false,
        },
      };
    },

    async giveBack(lease, spent) {
      // A batch that could cost nothing took no lease.
      if (lease.id.startsWith(NO_LEASE)) return;
      await engine.ledger.returnLease({
        id: lease.id, orgId: lease.org_id, workspaceId: lease.workspace_id, keyHash: lease.key_hash, amount: BigInt(lease.amount),
        settingsVersion: lease.settings_version, budgetVersion: lease.budget_version, useUntil: lease.use_until,
      }, spent);
    },
  };
}
