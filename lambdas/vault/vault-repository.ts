// Vault rows: each vault's encrypted data key, its sealed secrets (ordered by name) and its release audit
// trail, under one partition per vault. No row holds a plaintext value.
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { partition, queryAll } from '../platform/dynamo/query.js';
import { unlessConditionFails } from '../platform/dynamo/write-failures.js';

export interface SecretRow {
  name: string;
  /** Null only for legacy rows written before host binding was required. */
  hosts: string[] | null;
  /** base64 of the AES-256-GCM sealed value (see vault/envelope.ts). */
  sealed: string;
  fingerprint: string | null;
  created_at: string;
  updated_at: string;
}

export interface AuditEntry {
  action: 'release' | 'refuse';
  secret: string;
  host: string;
  /** Who asked: the feature and the caller (generation id, key hash, intern id …). */
  requester: string;
  reason?: string;
  at: string;
}

function secretFromItem(item: Record<string, unknown>): SecretRow {
  return {
    name: item.name as string,
    hosts: Array.isArray(item.hosts) ? item.hosts as string[] : null,
    sealed: item.sealed as string,
    fingerprint: typeof item.fingerprint === 'string' ? item.fingerprint : null,
    created_at: item.created_at as string,
    updated_at: (item.updated_at ?? item.created_at) as string,
  };
}

export class VaultRepository {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string) {}

  async getDataKey(vaultId: string): Promise<Buffer | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.vaultDataKey(vaultId), ConsistentRead: true }));
    return Item ? Buffer.from(Item.encrypted_key as string, 'base64') : undefined;
  }

  /** Stores a vault's encrypted data key once; false when another writer stored one first. */
  async putDataKey(vaultId: string, encrypted: Buffer, at: string): Promise<boolean> {
    return unlessConditionFails(this.db.send(new PutCommand({
      TableName: this.tableName,
      Item: { ...itemKeys.vaultDataKey(vaultId), type: 'vault_data_key', vault_id: vaultId, encrypted_key: encrypted.toString('base64'), created_at: at },
      ConditionExpression: 'attribute_not_exists(pk)',
    })).then(() => true), false);
  }

  /** Creates or replaces a secret; a replaced secret keeps its created_at. */
  async putSecret(vaultId: string, row: SecretRow): Promise<SecretRow> {
    const { Attributes } = await this.db.send(new UpdateCommand({
      TableName: this.tableName,
      Key: itemKeys.vaultSecret(vaultId, row.name),
      UpdateExpression: 'SET #type = :type, #vault = :vault, #name = :name, hosts = :hosts, sealed = :sealed, fingerprint = :fingerprint, '
        + 'created_at = if_not_exists(created_at, :created_at), updated_at = :updated_at',
      ExpressionAttributeNames: { '#type': 'type', '#vault': 'vault_id', '#name': 'name' },
      ExpressionAttributeValues: {
        ':type': 'vault_secret', ':vault': vaultId, ':name': row.name, ':hosts': row.hosts, ':sealed': row.sealed, ':fingerprint': row.fingerprint,
        ':created_at': row.created_at, ':updated_at': row.updated_at,
      },
      ReturnValues: 'ALL_NEW',
    }));
    return secretFromItem(Attributes!);
  }

  async getSecret(vaultId: string, name: string): Promise<SecretRow | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.vaultSecret(vaultId, name), ConsistentRead: true }));
    return Item ? secretFromItem(Item) : undefined;
  }

  /** Every secret of a vault, ordered by name. */
  async listSecrets(vaultId: string): Promise<SecretRow[]> {
    const { pk, skPrefix } = itemKeys.vaultSecretsOf(vaultId);
    return (await queryAll(this.db, partition(this.tableName, pk, { skPrefix, consistent: true }))).map(secretFromItem);
  }

  async deleteSecret(vaultId: string, name: string): Promise<boolean> {
    return unlessConditionFails(this.db.send(new DeleteCommand({ TableName: this.tableName, Key: itemKeys.vaultSecret(vaultId, name), ConditionExpression: 'attribute_exists(pk)' })).then(() => true), false);
  }

  /** Removes a vault: its secrets, its audit trail and its data key. */
  async deleteVault(vaultId: string): Promise<void> {
    const items = await queryAll(this.db, partition(this.tableName, itemKeys.vaultDataKey(vaultId).pk, { projection: 'pk, sk' }));
    for (const item of items) await this.db.send(new DeleteCommand({ TableName: this.tableName, Key: { pk: item.pk, sk: item.sk } }));
  }

  async audit(vaultId: string, entry: AuditEntry): Promise<void> {
    await this.db.send(new PutCommand({
      TableName: this.tableName,
      Item: { ...itemKeys.vaultAudit(vaultId, entry.at, randomUUID()), type: 'vault_audit', vault_id: vaultId, ...entry },
    }));
  }

  async auditTrail(vaultId: string): Promise<AuditEntry[]> {
    const { pk, skPrefix } = itemKeys.vaultAuditOf(vaultId);
    return (await queryAll(this.db, partition(this.tableName, pk, { skPrefix, consistent: true }))).map((item) => ({
      action: item.action as AuditEntry['action'], secret: item.secret as string, host: item.host as string, requester: item.requester as string,
      ...(item.reason ? { reason: item.reason as string } : {}), at: item.at as string,
    }));
  }
}
