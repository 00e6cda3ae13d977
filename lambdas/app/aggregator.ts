// The meter aggregator's work: applies generation-record pages, delivered by the table's stream, to the meters.
import type { GatewayDeps } from './deps.js';

/** A page as the stream delivered it: the stream's sequence number and the item as written. */
export interface StreamedPage {
  sequenceNumber: string;
  item: Record<string, unknown>;
}

/**
 * Applies `pages` in order. `failedSequenceNumber` names the first page not applied; it and every page
 * after it are delivered again.
 */
export async function applyPages(deps: GatewayDeps, pages: StreamedPage[]): Promise<{ failedSequenceNumber?: string }> {
  // Transport only, for now: the aggregation rules (issue 11) replace this body.
  deps.log.info('aggregator pages received', { pages: pages.length });
  return {};
}
