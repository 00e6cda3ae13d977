// The batch bucket's client, through @aws-sdk/client-s3: the same code talks to S3 on Lambda and to the
// local stand-in (bin/local/s3.ts, s3rver on disk) under npm start.
import { S3Client } from '@aws-sdk/client-s3';
import { withoutSdkLogging } from './quiet-client.js';

/** `endpoint` is set only for a local stand-in. */
export function createS3Client(config: { endpoint?: string | undefined; region?: string | undefined }): S3Client {
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
