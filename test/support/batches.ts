// A batch submitted inline over HTTP and followed until it ends: for end-to-end tests of one endpoint's items.
import { waitFor } from './wait.js';

const ENDED = ['completed', 'failed', 'cancelled', 'expired'];

/** POSTs the batch (expecting 202), then reads it until it has ended; the ended batch with its first results page. */
export async function runInlineBatch(baseUrl: string, key: string, body: Record<string, unknown>, timeoutMs = 30_000): Promise<any> {
  const post = await fetch(`${baseUrl}/batches`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (post.status !== 202) throw new Error(`POST /batches answered ${post.status}: ${await post.text()}`);
  const { id } = await post.json() as { id: string };
  let batch: any;
  await waitFor(async () => {
    batch = await (await fetch(`${baseUrl}/batches/${id}`, { headers: { authorization: `Bearer ${key}` } })).json();
    return ENDED.includes(batch.status);
  }, { timeoutMs, what: `batch ${id} to end` });
  return batch;
}

/** A batch's results page by custom_id. */
export function resultsById(batch: { results: Array<{ custom_id: string }> }): Record<string, any> {
  return Object.fromEntries(batch.results.map((result) => [result.custom_id, result]));
}
