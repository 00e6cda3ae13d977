// The local KMS stand-in driven by the real @aws-sdk/client-kms: data keys, encryption context binding,
// errors as the SDK types them, and keys that survive a restart.
import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DecryptCommand, DescribeKeyCommand, EncryptCommand, GenerateDataKeyCommand, InvalidCiphertextException, KMSClient, NotFoundException } from '@aws-sdk/client-kms';
import { startLocalKms, type LocalKms } from '../../bin/local/kms.js';

const dir = mkdtempSync(join(tmpdir(), 'gateway-kms-'));
const started: LocalKms[] = [];
afterAll(async () => {
  await Promise.all(started.map((kms) => kms.close()));
  rmSync(dir, { recursive: true, force: true });
});

async function start(): Promise<{ kms: LocalKms; client: KMSClient }> {
  const kms = await startLocalKms({ dataDir: dir });
  started.push(kms);
  return { kms, client: new KMSClient({ endpoint: kms.url, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }) };
}

describe('local KMS', () => {
  it('generates data keys whose ciphertext decrypts only with the same encryption context', async () => {
    const { kms, client } = await start();
    const context = { org: 'o1', workspace: 'w1', purpose: 'vault' };
    const generated = await client.send(new GenerateDataKeyCommand({ KeyId: kms.keyArn, KeySpec: 'AES_256', EncryptionContext: context }));
    expect(generated.Plaintext).toHaveLength(32);
    expect(generated.KeyId).toBe(kms.keyArn);
    const decrypted = await client.send(new DecryptCommand({ CiphertextBlob: generated.CiphertextBlob, EncryptionContext: { purpose: 'vault', workspace: 'w1', org: 'o1' } }));
    expect(Buffer.from(decrypted.Plaintext!)).toEqual(Buffer.from(generated.Plaintext!));
    for (const wrong of [{ ...context, workspace: 'w2' }, { org: 'o1', workspace: 'w1' }, undefined]) {
      await expect(client.send(new DecryptCommand({ CiphertextBlob: generated.CiphertextBlob, EncryptionContext: wrong }))).rejects.toBeInstanceOf(InvalidCiphertextException);
    }
    const tampered = Buffer.from(generated.CiphertextBlob!);
    tampered[tampered.length - 1]! ^= 1;
    await expect(client.send(new DecryptCommand({ CiphertextBlob: tampered, EncryptionContext: context }))).rejects.toBeInstanceOf(InvalidCiphertextException);
    expect(kms.calls.get('GenerateDataKey')).toBe(1);
  });

  it('encrypts small payloads, resolves aliases and ARNs, and reports unknown keys as NotFoundException', async () => {
    const { kms, client } = await start();
    const sealed = await client.send(new EncryptCommand({ KeyId: 'alias/model-gateway', Plaintext: Buffer.from('hello'), EncryptionContext: { a: 'b' } }));
    const opened = await client.send(new DecryptCommand({ CiphertextBlob: sealed.CiphertextBlob, EncryptionContext: { a: 'b' }, KeyId: kms.keyArn }));
    expect(Buffer.from(opened.Plaintext!).toString()).toBe('hello');
    expect((await client.send(new DescribeKeyCommand({ KeyId: kms.keyArn }))).KeyMetadata).toMatchObject({ Enabled: true, KeyUsage: 'ENCRYPT_DECRYPT' });
    await expect(client.send(new DescribeKeyCommand({ KeyId: 'arn:aws:kms:local:000000000000:key/00000000-0000-0000-0000-000000000000' }))).rejects.toBeInstanceOf(NotFoundException);
  });

  it('keeps its key across restarts, so earlier ciphertexts still decrypt', async () => {
    const first = await start();
    const sealed = await first.client.send(new GenerateDataKeyCommand({ KeyId: first.kms.keyArn, KeySpec: 'AES_256', EncryptionContext: { v: '1' } }));
    await first.kms.close();
    const second = await start();
    expect(second.kms.keyArn).toBe(first.kms.keyArn);
    const opened = await second.client.send(new DecryptCommand({ CiphertextBlob: sealed.CiphertextBlob, EncryptionContext: { v: '1' } }));
    expect(Buffer.from(opened.Plaintext!)).toEqual(Buffer.from(sealed.Plaintext!));
  });
});
