// Interns, one item each under their organization's partition (their private vaults are the vault's rows).
import { DeleteCommand, GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { partition, queryAll } from '../platform/dynamo/query.js';
import { unlessConditionFails } from '../platform/dynamo/write-failures.js';

export type InternStatus = 'awaiting_slack_install' | 'queued' | 'provisioning' | 'running' | 'failed' | 'stopped' | 'destroying' | 'destroy_failed';

export interface Intern {
  id: string;
  org_id: string;
  workspace_id: string;
  name: string;
  description: string | null;
  instructions: string | null;
  model: string | null;
  status: InternStatus;
  created_by: string;
  created_at: string;
  updated_at: string;
}

function internFromItem(item: Record<string, unknown>): Intern {
  return {
    id: item.id as string,
    org_id: item.org_id as string,
    workspace_id: item.workspace_id as string,
    name: item.name as string,
    description: (item.description ?? null) as string | null,
    instructions: (item.instructions ?? null) as string | null,
    model: (item.model ?? null) as string | null,
    status: item.status as InternStatus,
    created_by: item.created_by as string,
    created_at: item.created_at as string,
    updated_at: item.updated_at as string,
  };
}

export class InternRepository {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string) {}

  /** Creates an intern (`mustExist` false) or replaces one that still exists; false when that condition fails. */
  async putIntern(intern: Intern, mustExist = false): Promise<boolean> {
    return unlessConditionFails(this.db.send(new PutCommand({
      TableName: this.tableName,
      Item: { ...itemKeys.intern(intern.org_id, intern.id), type: 'intern', ...intern },
      ConditionExpression: mustExist ? 'attribute_exists(pk)' : 'attribute_not_exists(pk)',
    })).then(() => true), false);
  }

  async getIntern(orgId: string, internId: string): Promise<Intern | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.intern(orgId, internId), ConsistentRead: true }));
    return Item ? internFromItem(Item) : undefined;
  }

  async listInterns(orgId: string): Promise<Intern[]> {
    const { pk, skPrefix } = itemKeys.internsOf(orgId);
    return (await queryAll(this.db, partition(this.tableName, pk, { skPrefix }))).map(internFromItem);
  }

  async deleteIntern(orgId: string, internId: string): Promise<void> {
    await this.db.send(new DeleteCommand({ TableName: this.tableName, Key: itemKeys.intern(orgId, internId) }));
  }
}
