// The local S3 (s3rver on disk) through the gateway's own S3 client: a streamed upload is stored as sent
// (no chunk framing), a multipart upload is joined in order, reads stream back, and buckets survive a
// restart on the same directory.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createHash } from 'node:crypto';
import {
  CompleteMultipartUploadCommand, CreateMultipartUploadCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, UploadPartCommand,
} from '@aws-sdk/client-s3';
import { startLocalS3, type LocalS3 } from '../../bin/local/s3.js';

const directory = mkdtempSync(join(tmpdir(), 'local-s3-'));
let s3: LocalS3;

beforeAll(async () => {
  s3 = await startLocalS3({ directory, buckets: ['batches'] });
});

afterAll(async () => {
  await s3?.close();
});

const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex');

async function read(key: string): Promise<Buffer> {
  const got = await s3.client.send(new GetObjectCommand({ Bucket: 'batches', Key: key }));
  const parts: Buffer[] = [];
  for await (const chunk of got.Body as Readable) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

describe('local S3', () => {
  it('stores a streamed upload byte for byte and streams it back', async () => {
    const body = Buffer.from(Array.from({ length: 20_000 }, (_, i) => `{"custom_id":"c${i}","body":{}}\n`).join(''));
    await s3.client.send(new PutObjectCommand({
      Bucket: 'batches', Key: 'inputs/streamed.jsonl', ContentLength: body.length,
      Body: Readable.from([body.subarray(0, 1000), body.subarray(1000, 300_000), body.subarray(300_000)]),
    }));
    expect((await s3.client.send(new HeadObjectCommand({ Bucket: 'batches', Key: 'inputs/streamed.jsonl' }))).ContentLength).toBe(body.length);
    expect(sha(await read('inputs/streamed.jsonl'))).toBe(sha(body));
  });

  it('joins a multipart upload in part order', async () => {
    const first = Buffer.alloc(5 * 1024 * 1024, 'a');
    const second = Buffer.from('tail\n');
    const { UploadId } = await s3.client.send(new CreateMultipartUploadCommand({ Bucket: 'batches', Key: 'inputs/parts.jsonl' }));
    // Parts may arrive in any order.
    const p2 = await s3.client.send(new UploadPartCommand({ Bucket: 'batches', Key: 'inputs/parts.jsonl', UploadId, PartNumber: 2, Body: second }));
    const p1 = await s3.client.send(new UploadPartCommand({ Bucket: 'batches', Key: 'inputs/parts.jsonl', UploadId, PartNumber: 1, Body: first }));
    await s3.client.send(new CompleteMultipartUploadCommand({
      Bucket: 'batches', Key: 'inputs/parts.jsonl', UploadId,
      MultipartUpload: { Parts: [{ PartNumber: 1, ETag: p1.ETag }, { PartNumber: 2, ETag: p2.ETag }] },
    }));
    expect(sha(await read('inputs/parts.jsonl'))).toBe(sha(Buffer.concat([first, second])));
  });

  it('keeps buckets and objects across a restart on the same directory', async () => {
    await s3.client.send(new PutObjectCommand({ Bucket: 'batches', Key: 'kept.txt', Body: 'still here' }));
    await s3.close();
    s3 = await startLocalS3({ directory, buckets: ['batches'] });
    expect((await read('kept.txt')).toString()).toBe('still here');
  });
});
