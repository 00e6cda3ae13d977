// Presets and their versions in the table. A preset is one item per workspace and slug that carries its
// designated version inline (a request through the preset reads one item); each version is an item of its
// own under the preset. A new version is one transaction: the preset item moves from version n to n + 1 on
// the condition that it is still at n, and the version item is put on the condition that it is new. So two
// writers can never both take n + 1, and a writer that lost tries again on top of the winner: numbers stay
// 1, 2, 3 … with no gap and no duplicate, however many write at once.
import { randomUUID } from 'node:crypto';
import { GetCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { partition, queryAll, queryPage } from '../platform/dynamo/query.js';
import { cancellationOf } from '../platform/dynamo/write-failures.js';
import type { Preset, PresetConfig, PresetScope, PresetVersion } from './types.js';

/** Tries of one new version against concurrent writers of the same slug, the first included. */
export const VERSION_ATTEMPTS = 40;

export interface NewVersion {
  config: PresetConfig;
  systemPrompt: string | null;
  /** Who made it (the key's hash). */
  creator: string;
  now: string;
}

export type SaveOutcome = { kind: 'saved'; preset: Preset; attempts: number } | { kind: 'contended'; attempts: number };

interface PresetItem extends Preset {
  /** The highest version number taken (the designated one). */
  latest_version: number;
}

function presetOf(item: Record<string, unknown>): Preset {
  const { pk: _pk, sk: _sk, type: _type, org_id: _org, latest_version: _latest, ...preset } = item;
  return preset as unknown as Preset;
}

function versionOf(item: Record<string, unknown>): PresetVersion {
  const { pk: _pk, sk: _sk, type: _type, ...version } = item;
  return version as unknown as PresetVersion;
}

export class PresetRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    /** Waits between tries after losing to a concurrent writer. */
    private readonly backoff: (attempt: number) => Promise<void> = (attempt) => new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 5 * attempt))),
  ) {}

  async get(scope: PresetScope, slug: string, consistent = false): Promise<Preset | undefined> {
    const item = await this.getItem(scope, slug, consistent);
    return item ? presetOf(item as unknown as Record<string, unknown>) : undefined;
  }

  private async getItem(scope: PresetScope, slug: string, consistent: boolean): Promise<PresetItem | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.preset(scope.orgId, scope.workspaceId, slug), ConsistentRead: consistent }));
    return Item as PresetItem | undefined;
  }

  /** Every preset of the workspace, most recently updated first. */
  async list(scope: PresetScope): Promise<Preset[]> {
    const { pk, skPrefix } = itemKeys.presetsOf(scope.orgId, scope.workspaceId);
    const items = await queryAll(this.db, partition(this.tableName, pk, { skPrefix }));
    return items.map(presetOf).sort((a, b) => (a.updated_at < b.updated_at ? 1 : a.updated_at > b.updated_at ? -1 : a.slug.localeCompare(b.slug)));
  }

  /** A page of the preset's versions, oldest (1) first, and how many there are. */
  async versions(preset: Preset, page: { offset: number; limit: number }): Promise<{ versions: PresetVersion[]; total: number }> {
    const { pk, skPrefix } = itemKeys.presetVersionsOf(preset.id);
    const items = await queryPage(this.db, partition(this.tableName, pk, { skPrefix }), page);
    return { versions: items.map(versionOf), total: preset.designated_version.version };
  }

  async version(preset: Preset, version: number): Promise<PresetVersion | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.presetVersion(preset.id, version) }));
    return Item ? versionOf(Item) : undefined;
  }

  /**
   * Creates the preset with version 1, or adds the next version and designates it. Losing to a concurrent
   * writer (or, on AWS, a transaction conflict) means reading the winner's state and trying again on top
   * of it; 'contended' only after VERSION_ATTEMPTS tries.
   */
  async addVersion(scope: PresetScope, slug: string, next: NewVersion): Promise<SaveOutcome> {
    for (let attempt = 1; attempt <= VERSION_ATTEMPTS; attempt += 1) {
      const current = await this.getItem(scope, slug, true);
      const presetId = current?.id ?? randomUUID();
      const number = (current?.latest_version ?? 0) + 1;
      const version: PresetVersion = {
        id: randomUUID(), preset_id: presetId, version: number, config: next.config, system_prompt: next.systemPrompt,
        creator_id: next.creator, created_at: next.now, updated_at: next.now,
      };
      const preset: PresetItem = current
        ? { ...current, updated_at: next.now, designated_version_id: version.id, designated_version: version, latest_version: number }
        : {
          id: presetId, name: slug, slug, description: null, status: 'active', status_updated_at: null, created_at: next.now, updated_at: next.now,
          creator_user_id: next.creator, workspace_id: scope.workspaceId, designated_version_id: version.id, designated_version: version, latest_version: number,
        };
      try {
        await this.db.send(new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: this.tableName,
                Item: { ...preset, ...itemKeys.preset(scope.orgId, scope.workspaceId, slug), type: 'preset', org_id: scope.orgId },
                ...(current
                  ? { ConditionExpression: 'latest_version = :seen', ExpressionAttributeValues: { ':seen': current.latest_version } }
                  : { ConditionExpression: 'attribute_not_exists(pk)' }),
              },
            },
            { Put: { TableName: this.tableName, Item: { ...version, ...itemKeys.presetVersion(presetId, number), type: 'preset_version' }, ConditionExpression: 'attribute_not_exists(pk)' } },
          ],
        }));
        return { kind: 'saved', preset: presetOf(preset as unknown as Record<string, unknown>), attempts: attempt };
      } catch (err) {
        if (!cancellationOf(err)) throw err;
        if (attempt < VERSION_ATTEMPTS) await this.backoff(attempt);
      }
    }
    return { kind: 'contended', attempts: VERSION_ATTEMPTS };
  }
}
