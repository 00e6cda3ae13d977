// Batch inputs uploaded in parts (POST /batches/uploads): one item per upload, naming its S3 multipart upload,
// its object and who may use it. It expires with the parts S3 keeps for it (the bucket aborts incomplete
// uploads after a day); a completed one is used by at most one batch.
import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { isConditionFailed } from '../platform/dynamo/write-failures.js';

export interface BatchUpload {
  id: string;
  org_id: string;
  workspace_id: string;
  /** The object the parts make (batches/uploads/<id>/input.jsonl) and S3's id of the multipart upload. */
  key: string;
  s3_upload_id: string;
  /** What the client said it will send. */
  bytes: number;
  part_bytes: number;
  /** refused: more than 200 MB arrived (and was deleted). */
  status: 'uploading' | 'completed' | 'used' | 'refused';
  /** Unix seconds. */
  created_at: number;
  expires_at: number;
}

export class BatchUploadRepository {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string) {}

  async create(upload: BatchUpload): Promise<void> {
    await this.db.send(new PutCommand({
      TableName: this.tableName,
      // Kept a day past its expiry, then DynamoDB's TTL removes it.
      Item: { ...itemKeys.batchUpload(upload.id), type: 'batch_upload', ...upload, ttl: upload.expires_at + 86_400 },
      ConditionExpression: 'attribute_not_exists(pk)',
    }));
  }

  async get(id: string): Promise<BatchUpload | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.batchUpload(id), ConsistentRead: true }));
    if (!Item) return undefined;
    const { pk: _pk, sk: _sk, type: _type, ttl: _ttl, ...upload } = Item;
    return upload as BatchUpload;
  }

  /** Moves it from `from` to `to`; false when it was not in `from` (completed twice, used by another batch). */
  async move(id: string, from: BatchUpload['status'], to: BatchUpload['status'], set: { bytes?: number } = {}): Promise<boolean> {
    try {
      await this.db.send(new UpdateCommand({
        TableName: this.tableName,
        Key: itemKeys.batchUpload(id),
        UpdateExpression: `SET #status = :to${set.bytes !== undefined ? ', bytes = :bytes' : ''}`,
        ConditionExpression: '#status = :from',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':to': to, ':from': from, ...(set.bytes !== undefined ? { ':bytes': set.bytes } : {}) },
      }));
      return true;
    } catch (err) {
      if (isConditionFailed(err)) return false;
      throw err;
    }
  }
}
