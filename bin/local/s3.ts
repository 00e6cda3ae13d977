// npm start's S3: s3rver, which keeps objects as files under the data directory (a batch's 200 MB input
// never sits in memory) and speaks S3's REST protocol to the real @aws-sdk/client-s3. It does not check
// signatures, presigned ones included: locally, anyone who can reach the port can read and write.
import { mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import S3rver from 's3rver';
import S3Error from 's3rver/lib/models/error.js';
import { CreateBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import { createS3Client } from '../../lambdas/platform/aws/s3.js';

export interface LocalS3 {
  endpoint: string;
  client: S3Client;
  close(): Promise<void>;
}

/** Starts the stand-in on `port` (0: any free one) with its objects under `directory`, and creates `buckets`. */
export async function startLocalS3(options: { directory: string; port?: number; host?: string; buckets?: string[] }): Promise<LocalS3> {
  mkdirSync(options.directory, { recursive: true });
  const server = new S3rver({ port: options.port ?? 0, address: options.host ?? '127.0.0.1', silent: true, directory: options.directory });
  checkPartsOnCompletion(server);
  const { port } = await server.run();
  const endpoint = `http://${options.host ?? '127.0.0.1'}:${port}`;
  const client = createS3Client({ endpoint });
  for (const bucket of options.buckets ?? []) {
    try {
      await client.send(new CreateBucketCommand({ Bucket: bucket }));
    } catch (err) {
      // A bucket kept on disk from an earlier start is still there.
      if ((err as { name?: string }).name !== 'BucketAlreadyOwnedByYou' && (err as { name?: string }).name !== 'BucketAlreadyExists') throw err;
    }
  }
  return {
    endpoint,
    client,
    async close() {
      client.destroy();
      await server.close();
    },
  };
}

interface MultipartStore {
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
  putObjectMultipart(bucket: string, uploadId: string, parts: Array<{ number: number; etag: string }>): Promise<unknown>;
}

/**
 * Completing a multipart upload checks its parts as S3 does: each must have been uploaded, with the ETag
 * given (else InvalidPart, a 400). s3rver checks neither, and reads a part that was never uploaded as a file
 * stream without an error handler: one such completion took the whole stand-in process down.
 */
function checkPartsOnCompletion(server: S3rver): void {
  const store = (server as unknown as { store: MultipartStore }).store;
  const complete = store.putObjectMultipart.bind(store);
  store.putObjectMultipart = async (bucket, uploadId, parts) => {
    const uploads = store.getResourcePath(bucket, undefined, 'uploads');
    for (const part of parts) {
      const md5 = Number.isInteger(part.number) && part.number >= 1 ? await readFile(join(uploads, uploadId, `${part.number}.md5`), 'utf8').catch(() => undefined) : undefined;
      if (md5 === undefined || md5 !== part.etag) {
        throw new S3Error('InvalidPart', 'One or more of the specified parts could not be found. The part may not have been uploaded, or the specified entity tag may not match the part\'s entity tag.');
      }
    }
    return complete(bucket, uploadId, parts);
  };
}
