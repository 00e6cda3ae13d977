// npm start's S3: s3rver, which keeps objects as files under the data directory (a batch's 200 MB input
// never sits in memory) and speaks S3's REST protocol to the real @aws-sdk/client-s3. It does not check
// signatures, presigned ones included: locally, anyone who can reach the port can read and write.
import { mkdirSync } from 'node:fs';
import S3rver from 's3rver';
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
