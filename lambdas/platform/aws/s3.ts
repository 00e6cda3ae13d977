// The batch bucket's client, through @aws-sdk/client-s3: the same code talks to S3 on Lambda and to the
// local stand-in (bin/local/s3.ts, s3rver on disk) under npm start.
import { S3Client } from '@aws-sdk/client-s3';
import { withoutSdkLogging } from './quiet-client.js';

export interface S3Config {
  bucket: string;
  /** Set only for a local stand-in. */
  endpoint?: string | undefined;
  region?: string | undefined;
}

export function s3ConfigFromEnv(env: NodeJS.ProcessEnv = process.env): S3Config | undefined {
  const bucket = env.GATEWAY_BATCH_BUCKET;
  if (!bucket) return undefined;
  return { bucket, endpoint: env.S3_ENDPOINT || undefined, region: env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined };
}

export function createS3Client(config: Pick<S3Config, 'endpoint' | 'region'>): S3Client {
  const local = Boolean(config.endpoint);
  return withoutSdkLogging(new S3Client({
    endpoint: config.endpoint,
    region: config.region ?? (local ? 'us-east-1' : undefined),
    ...(local
      ? {
        credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
        // The stand-in serves buckets by path, not as host names.
        forcePathStyle: true,
        // Checksums only where S3 requires them: with the SDK's default (a trailing checksum on every
        // upload), a streamed upload is sent with aws-chunked framing, which the stand-in would store as is.
        requestChecksumCalculation: 'WHEN_REQUIRED' as const,
        responseChecksumValidation: 'WHEN_REQUIRED' as const,
      }
      : {}),
    maxAttempts: 3,
  }));
}
