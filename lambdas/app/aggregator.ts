// The meter aggregator's entry from the stream: page items as the stream delivers them (in order), applied
// by the billing module's MeterAggregator. Answers the first page it could not apply, so that the event
// source retries from there (pages before it are applied; a page applied twice is refused by its marker).
import type { AggregatorDeps } from './aggregator-deps.js';
import { pageFromItem } from '../billing/page-repository.js';
import type { Page } from '../billing/pages.js';

export interface StreamedPage {
  sequenceNumber: string;
  item: Record<string, unknown>;
}

export async function applyPages(deps: AggregatorDeps, pages: readonly StreamedPage[]): Promise<{ failedSequenceNumber?: string }> {
  const decoded: Page[] = [];
  let undecodable: { at: number; error: unknown } | undefined;
  for (const [at, { item }] of pages.entries()) {
    try {
      decoded.push(pageFromItem(item));
    } catch (error) {
      undecodable = { at, error };
      break;
    }
  }
  let applied = 0;
  try {
    await deps.aggregator.apply(decoded, (group) => { applied += group.length; });
  } catch (err) {
    deps.log.error('pages not applied; the stream retries them', { first: pages[applied]!.sequenceNumber, pages: decoded.length - applied, error: String(err) });
    return { failedSequenceNumber: pages[applied]!.sequenceNumber };
  }
  if (undecodable) {
    deps.log.error('page not readable; the stream retries it, then sends it to the dead-letter queue', { sequence_number: pages[undecodable.at]!.sequenceNumber, error: String(undecodable.error) });
    return { failedSequenceNumber: pages[undecodable.at]!.sequenceNumber };
  }
  return {};
}
