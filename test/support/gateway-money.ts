// The money end-to-end tests' view of `npm start`: what its replies say they cost (over HTTP), and what its
// table holds (pages, applied markers, meters, leases) read straight from its DynamoDB Local, while it runs
// or, after it has stopped, from its data directory.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../lambdas/platform/dynamo/client.js';
import { itemKeys } from '../../lambdas/platform/dynamo/item-keys.js';
import { nanosFromStore, usdToNanos, type Nanos } from '../../lambdas/platform/money.js';
import { pageFromItem } from '../../lambdas/billing/page-repository.js';
import { meterAttr } from '../../lambdas/billing/meter-item.js';
import type { Page } from '../../lambdas/billing/pages.js';
import { startDynamoDbLocal } from '../../bin/local/dynamodb-local.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/** npm start's table name (TABLE_NAME unset). */
const TABLE = 'gateway';

/** A management API call; throws with the status and body on anything but 2xx. */
export async function api(baseUrl: string, key: string, method: string, path: string, body?: unknown): Promise<Json> {
  const reply = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await reply.text();
  if (!reply.ok) throw new Error(`${method} ${path} answered ${reply.status}: ${text}`);
  return JSON.parse(text) as Json;
}

export interface RegularKey {
  key: string;
  hash: string;
  orgId: string;
  workspaceId: string;
}

/** A regular (inference) key made with the management key, and the organization and workspace it bills. */
export async function createRegularKey(baseUrl: string, adminKey: string, name: string): Promise<RegularKey> {
  const created = await api(baseUrl, adminKey, 'POST', '/keys', { name });
  const own = await api(baseUrl, created.key as string, 'GET', '/key');
  return { key: created.key as string, hash: created.data.hash as string, orgId: own.data.organization_id as string, workspaceId: own.data.workspace_id as string };
}

/** A finished chat completion: its generation id and what its reply says it cost. */
export interface Reply {
  id: string;
  cost: Nanos;
}

const chatBody = (content: string, stream: boolean) => JSON.stringify({
  model: 'simulator/echo',
  messages: [{ role: 'user', content }],
  ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
});

/** The JSON payloads of a chat stream's `data:` events (not its comments, not [DONE]). */
function sseEvents(text: string): Json[] {
  return text.split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice('data: '.length)) as Json);
}

/** One chat completion with a regular key, streamed or not, read to its end. */
export async function chat(baseUrl: string, key: string, content: string, stream: boolean): Promise<Reply> {
  const reply = await fetch(`${baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: chatBody(content, stream),
  });
  const text = await reply.text();
  if (reply.status !== 200) throw new Error(`chat completion answered ${reply.status}: ${text}`);
  if (!stream) {
    const json = JSON.parse(text) as Json;
    return { id: json.id as string, cost: usdToNanos(json.usage.cost as number) };
  }
  const events = sseEvents(text);
  const failed = events.find((event) => event.error !== undefined);
  if (failed) throw new Error(`chat stream ended with an error event: ${JSON.stringify(failed)}`);
  const usage = events.findLast((event) => event.usage)?.usage as Json | undefined;
  if (!usage) throw new Error(`chat stream carried no usage: ${text.slice(-500)}`);
  return { id: events[0]!.id as string, cost: usdToNanos(usage.cost as number) };
}

/** A streamed chat completion in flight: its first content event has arrived. */
export interface InFlightStream {
  id: string;
  /** Settles when the stream ends or its connection is cut; never rejects. */
  ended: Promise<{ text: string; error?: string }>;
}

/** Starts a streamed chat completion and resolves once its first content has arrived. */
export async function startStream(baseUrl: string, key: string, content: string): Promise<InFlightStream> {
  const reply = await fetch(`${baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: chatBody(content, true),
  });
  if (reply.status !== 200 || !reply.body) throw new Error(`chat stream answered ${reply.status}: ${await reply.text()}`);
  const reader = reply.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!sseEvents(text).some((event) => event.choices?.[0]?.delta?.content)) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`chat stream ended before its first content: ${text}`);
    text += decoder.decode(value, { stream: true });
  }
  const ended = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return { text };
        text += decoder.decode(value, { stream: true });
      }
    } catch (err) {
      return { text, error: String(err) };
    }
  })();
  return { id: sseEvents(text)[0]!.id as string, ended };
}

/** Polls `check` every 25 ms until it answers true or `deadline` (epoch ms) passes; true if it did. */
export async function until(check: () => Promise<boolean>, deadline: number): Promise<boolean> {
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The amounts of one meter item, as stored. */
export interface StoredMeter {
  usage: Nanos;
  held: Nanos;
}

export interface StoredOrganization extends StoredMeter {
  credits: Nanos;
  balance: Nanos;
}

/** The gateway's table as stored now: one consistent scan. */
export interface TableView {
  items: Json[];
  /** Every page of generation records. */
  pages: Page[];
  /** Pages whose seq is not yet in their block's APPLIED marker (the aggregator has not applied them). */
  unapplied: Page[];
  organization(orgId: string): StoredOrganization;
  key(hash: string): StoredMeter;
  workspace(orgId: string, workspaceId: string): StoredMeter;
  /** LEASE items of an organization. */
  leases(orgId: string): Json[];
  /** Exact holds (HOLD items) of an organization. */
  holds(orgId: string): Json[];
}

export interface Store {
  read(): Promise<TableView>;
  close(): void;
}

/** The table of a running gateway, through the DynamoDB Local endpoint it wrote into its data directory. */
export function runningStore(dataDir: string): Store {
  const { dynamodb_endpoint: endpoint } = JSON.parse(readFileSync(join(dataDir, 'runtime.json'), 'utf8')) as { dynamodb_endpoint: string };
  return storeAt(endpoint);
}

/** Reads the table of a gateway that has stopped: its data directory served by a DynamoDB Local of our own. */
export async function readStoppedStore(dataDir: string): Promise<TableView> {
  const dynamodb = await startDynamoDbLocal({ dataDir: join(dataDir, 'dynamodb') });
  const store = storeAt(dynamodb.endpoint);
  try {
    return await store.read();
  } finally {
    store.close();
    await dynamodb.stop();
  }
}

function storeAt(endpoint: string): Store {
  const db = createDocumentClient({ endpoint });
  return {
    read: async () => {
      const items: Json[] = [];
      let start: Json | undefined;
      do {
        const result = await db.send(new ScanCommand({ TableName: TABLE, ConsistentRead: true, ExclusiveStartKey: start }));
        items.push(...(result.Items ?? []));
        start = result.LastEvaluatedKey;
      } while (start);
      return viewOf(items);
    },
    close: () => db.destroy(),
  };
}

function viewOf(items: Json[]): TableView {
  const find = (key: { pk: string; sk: string }) => {
    const found = items.find((item) => item.pk === key.pk && item.sk === key.sk);
    if (!found) throw new Error(`no item ${key.pk} ${key.sk} in the table`);
    return found;
  };
  const pages = items
    .filter((item) => String(item.pk).startsWith(itemKeys.pagesOf('').pk) && String(item.sk).startsWith(itemKeys.pageSortPrefix))
    .map((item) => pageFromItem(item));
  const appliedSeqs = (block: string) => {
    const marker = items.find((item) => item.pk === itemKeys.appliedMarker(block).pk && item.sk === itemKeys.appliedMarker(block).sk);
    return new Set([...((marker?.seqs as Set<number> | undefined) ?? [])].map(Number));
  };
  const meter = (item: Json): StoredMeter => ({ usage: nanosFromStore(item[meterAttr.usage('total')]), held: nanosFromStore(item[meterAttr.held]) });
  return {
    items,
    pages,
    unapplied: pages.filter((page) => !appliedSeqs(page.block).has(page.seq)),
    organization: (orgId) => {
      const item = find(itemKeys.organization(orgId));
      return { credits: nanosFromStore(item.total_credits), usage: nanosFromStore(item.total_usage), balance: nanosFromStore(item.balance), held: nanosFromStore(item.held) };
    },
    key: (hash) => meter(find(itemKeys.apiKey(hash))),
    workspace: (orgId, workspaceId) => meter(find(itemKeys.workspace(orgId, workspaceId))),
    leases: (orgId) => items.filter((item) => String(item.pk).startsWith(itemKeys.lease('').pk) && item.org_id === orgId),
    holds: (orgId) => items.filter((item) => String(item.pk).startsWith(itemKeys.hold('').pk) && item.org_id === orgId),
  };
}
