// The KMS calls of envelope encryption, through @aws-sdk/client-kms: the same code talks to AWS KMS on
// Lambda and to the local stand-in (bin/local/kms.ts) under npm start. Counts its calls, which the cost
// ledger prices.
import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { withoutSdkLogging } from './quiet-client.js';

export interface KmsPort {
  /** A new 256-bit data key: plaintext (keep in memory only) and its ciphertext under the master key. */
  generateDataKey(context: Record<string, string>): Promise<{ plaintext: Buffer; ciphertext: Buffer }>;
  /** The plaintext of a data key; fails when the ciphertext or the encryption context do not match. */
  decrypt(ciphertext: Buffer, context: Record<string, string>): Promise<Buffer>;
  /** KMS requests made so far. */
  readonly calls: number;
}

export interface KmsConfig {
  keyId: string;
  endpoint?: string | undefined;
  region?: string | undefined;
}

export function kmsConfigFromEnv(env: NodeJS.ProcessEnv = process.env): KmsConfig | undefined {
  const keyId = env.GATEWAY_KMS_KEY_ID;
  if (!keyId) return undefined;
  return { keyId, endpoint: env.KMS_ENDPOINT || undefined, region: env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined };
}

export class AwsKms implements KmsPort {
  private count = 0;
  private readonly client: KMSClient;

  constructor(private readonly config: KmsConfig) {
    const local = Boolean(config.endpoint);
    this.client = withoutSdkLogging(new KMSClient({
      endpoint: config.endpoint,
      region: config.region ?? (local ? 'local' : undefined),
      ...(local ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
      maxAttempts: 3,
    }));
  }

  get calls(): number {
    return this.count;
  }

  async generateDataKey(context: Record<string, string>): Promise<{ plaintext: Buffer; ciphertext: Buffer }> {
    this.count += 1;
    const out = await this.client.send(new GenerateDataKeyCommand({ KeyId: this.config.keyId, KeySpec: 'AES_256', EncryptionContext: context }));
    if (!out.Plaintext || !out.CiphertextBlob) throw new Error('KMS GenerateDataKey returned no key');
    return { plaintext: Buffer.from(out.Plaintext), ciphertext: Buffer.from(out.CiphertextBlob) };
  }

  async decrypt(ciphertext: Buffer, context: Record<string, string>): Promise<Buffer> {
    this.count += 1;
    const out = await this.client.send(new DecryptCommand({ CiphertextBlob: ciphertext, EncryptionContext: context, KeyId: this.config.keyId }));
    if (!out.Plaintext) throw new Error('KMS Decrypt returned no plaintext');
    return Buffer.from(out.Plaintext);
  }
}
