// A small KMS stand-in for npm start and the tests: an HTTP server speaking the KMS JSON protocol
// (X-Amz-Target: TrentService.<Operation>, application/x-amz-json-1.1), so the real @aws-sdk/client-kms
// runs unchanged against it. It implements what the gateway uses — CreateKey, DescribeKey,
// GenerateDataKey, Encrypt, Decrypt — with symmetric keys whose material never leaves the process
// (persisted under the data directory so a restart can still decrypt).
//
// Ciphertext blobs are `v1 | key id (36 ASCII bytes) | iv (12) | tag (16) | ciphertext`, sealed with
// AES-256-GCM under the key's material, with the encryption context (keys sorted, JSON) as additional
// authenticated data: as on AWS, a different or missing context fails with InvalidCiphertextException.
// Request signatures are not checked (any local credentials work).
import { createCipheriv, createDecipheriv, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';

const VERSION = 1;
const KEY_ID_LENGTH = 36;
const REGION = 'local';
const ACCOUNT = '000000000000';

interface KmsKey {
  id: string;
  material: Buffer;
  description: string;
  created: number;
  enabled: boolean;
}

export interface LocalKms {
  /** Endpoint for the SDK's `endpoint` option. */
  url: string;
  /** ARN of the key created (or reloaded) at start. */
  keyArn: string;
  /** Requests served, by operation (tests and the bench count KMS calls with it). */
  calls: Map<string, number>;
  /** Whether it still accepts requests (for /health). */
  readonly listening: boolean;
  close(): Promise<void>;
}

class KmsError extends Error {
  constructor(readonly type: string, message: string, readonly status = 400) {
    super(message);
  }
}

const arnOf = (id: string) => `arn:aws:kms:${REGION}:${ACCOUNT}:key/${id}`;

function contextAad(context: unknown): Buffer {
  if (context === undefined || context === null) return Buffer.alloc(0);
  if (typeof context !== 'object' || Array.isArray(context)) throw new KmsError('ValidationException', 'EncryptionContext must be a map of strings');
  const entries = Object.entries(context as Record<string, unknown>);
  for (const [, value] of entries) if (typeof value !== 'string') throw new KmsError('ValidationException', 'EncryptionContext values must be strings');
  return Buffer.from(JSON.stringify(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}

function base64Field(body: Record<string, unknown>, name: string): Buffer {
  const value = body[name];
  if (typeof value !== 'string' || value.length === 0) throw new KmsError('ValidationException', `${name} is required`);
  return Buffer.from(value, 'base64');
}

export async function startLocalKms(options: { port?: number; host?: string; dataDir?: string | null } = {}): Promise<LocalKms> {
  const keys = new Map<string, KmsKey>();
  const aliases = new Map<string, string>();
  const file = options.dataDir ? join(options.dataDir, 'keys.json') : undefined;
  if (file && existsSync(file)) {
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { keys: Array<Omit<KmsKey, 'material'> & { material: string }>; aliases: Record<string, string> };
    for (const key of stored.keys) keys.set(key.id, { ...key, material: Buffer.from(key.material, 'base64') });
    for (const [alias, id] of Object.entries(stored.aliases)) aliases.set(alias, id);
  }
  const save = () => {
    if (!file) return;
    mkdirSync(options.dataDir!, { recursive: true });
    writeFileSync(file, JSON.stringify({ keys: [...keys.values()].map((key) => ({ ...key, material: key.material.toString('base64') })), aliases: Object.fromEntries(aliases) }), { mode: 0o600 });
  };
  const createKey = (description: string): KmsKey => {
    const key = { id: randomUUID(), material: randomBytes(32), description, created: Date.now() / 1000, enabled: true };
    keys.set(key.id, key);
    save();
    return key;
  };
  const resolve = (keyId: unknown): KmsKey => {
    if (typeof keyId !== 'string' || keyId === '') throw new KmsError('ValidationException', 'KeyId is required');
    let id = keyId;
    if (id.startsWith('alias/')) id = aliases.get(id) ?? '';
    const arnMatch = /^arn:aws:kms:[^:]*:[^:]*:(key|alias)\/(.+)$/.exec(id);
    if (arnMatch) id = arnMatch[1] === 'alias' ? aliases.get(`alias/${arnMatch[2]}`) ?? '' : arnMatch[2]!;
    const key = keys.get(id);
    if (!key) throw new KmsError('NotFoundException', `Key '${keyId}' does not exist`);
    if (!key.enabled) throw new KmsError('DisabledException', `${arnOf(key.id)} is disabled.`);
    return key;
  };
  const seal = (key: KmsKey, plaintext: Buffer, context: unknown): Buffer => {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key.material, iv);
    cipher.setAAD(contextAad(context));
    const sealed = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), Buffer.from(key.id, 'ascii'), iv, cipher.getAuthTag(), sealed]);
  };
  const open = (blob: Buffer, context: unknown): { key: KmsKey; plaintext: Buffer } => {
    if (blob.length < 1 + KEY_ID_LENGTH + 28 || blob[0] !== VERSION) throw new KmsError('InvalidCiphertextException', 'The ciphertext is invalid.');
    const key = keys.get(blob.subarray(1, 1 + KEY_ID_LENGTH).toString('ascii'));
    if (!key) throw new KmsError('InvalidCiphertextException', 'The ciphertext refers to a key that does not exist.');
    if (!key.enabled) throw new KmsError('DisabledException', `${arnOf(key.id)} is disabled.`);
    const at = 1 + KEY_ID_LENGTH;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key.material, blob.subarray(at, at + 12));
      decipher.setAAD(contextAad(context));
      decipher.setAuthTag(blob.subarray(at + 12, at + 28));
      return { key, plaintext: Buffer.concat([decipher.update(blob.subarray(at + 28)), decipher.final()]) };
    } catch {
      throw new KmsError('InvalidCiphertextException', 'The ciphertext is invalid or the encryption context does not match.');
    }
  };
  const keyMetadata = (key: KmsKey) => ({
    KeyId: key.id, Arn: arnOf(key.id), AWSAccountId: ACCOUNT, CreationDate: key.created, Description: key.description, Enabled: key.enabled,
    KeyState: key.enabled ? 'Enabled' : 'Disabled', KeyUsage: 'ENCRYPT_DECRYPT', KeySpec: 'SYMMETRIC_DEFAULT', CustomerMasterKeySpec: 'SYMMETRIC_DEFAULT',
    KeyManager: 'CUSTOMER', Origin: 'AWS_KMS', EncryptionAlgorithms: ['SYMMETRIC_DEFAULT'], MultiRegion: false,
  });

  const operations: Record<string, (body: Record<string, unknown>) => unknown> = {
    CreateKey: (body) => ({ KeyMetadata: keyMetadata(createKey(typeof body.Description === 'string' ? body.Description : '')) }),
    CreateAlias: (body) => {
      const key = resolve(body.TargetKeyId);
      if (typeof body.AliasName !== 'string' || !body.AliasName.startsWith('alias/')) throw new KmsError('ValidationException', 'AliasName must start with alias/');
      if (aliases.has(body.AliasName)) throw new KmsError('AlreadyExistsException', `An alias with the name ${body.AliasName} already exists`);
      aliases.set(body.AliasName, key.id);
      save();
      return {};
    },
    DescribeKey: (body) => ({ KeyMetadata: keyMetadata(resolve(body.KeyId)) }),
    GenerateDataKey: (body) => {
      const key = resolve(body.KeyId);
      const bytes = body.NumberOfBytes !== undefined ? Number(body.NumberOfBytes) : body.KeySpec === 'AES_128' ? 16 : body.KeySpec === 'AES_256' ? 32 : NaN;
      if (!Number.isInteger(bytes) || bytes < 1 || bytes > 1024) throw new KmsError('ValidationException', 'KeySpec (AES_128, AES_256) or NumberOfBytes (1-1024) is required');
      const plaintext = randomBytes(bytes);
      return { KeyId: arnOf(key.id), Plaintext: plaintext.toString('base64'), CiphertextBlob: seal(key, plaintext, body.EncryptionContext).toString('base64') };
    },
    Encrypt: (body) => {
      const key = resolve(body.KeyId);
      const plaintext = base64Field(body, 'Plaintext');
      if (plaintext.length > 4096) throw new KmsError('ValidationException', 'Plaintext must be at most 4096 bytes');
      return { KeyId: arnOf(key.id), CiphertextBlob: seal(key, plaintext, body.EncryptionContext).toString('base64'), EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' };
    },
    Decrypt: (body) => {
      const { key, plaintext } = open(base64Field(body, 'CiphertextBlob'), body.EncryptionContext);
      if (body.KeyId !== undefined && resolve(body.KeyId).id !== key.id) throw new KmsError('IncorrectKeyException', 'The key ID in the request does not identify the key that encrypted the ciphertext.');
      return { KeyId: arnOf(key.id), Plaintext: plaintext.toString('base64'), EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' };
    },
  };

  const calls = new Map<string, number>();
  const reply = (res: ServerResponse, status: number, body: unknown, errorType?: string) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', 'content-length': Buffer.byteLength(text), 'x-amzn-requestid': randomUUID(), ...(errorType ? { 'x-amzn-errortype': errorType } : {}) });
    res.end(text);
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      const operation = target.startsWith('TrentService.') ? target.slice('TrentService.'.length) : '';
      try {
        const handler = Object.hasOwn(operations, operation) ? operations[operation] : undefined;
        if (req.method !== 'POST' || !handler) throw new KmsError('UnknownOperationException', `Unsupported operation ${target || '(none)'}`);
        let body: Record<string, unknown>;
        try {
          body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> : {};
        } catch {
          throw new KmsError('SerializationException', 'The request body is not valid JSON');
        }
        calls.set(operation, (calls.get(operation) ?? 0) + 1);
        reply(res, 200, handler(body));
      } catch (err) {
        const error = err instanceof KmsError ? err : new KmsError('KMSInternalException', 'Internal error', 500);
        reply(res, error.status, { __type: error.type, message: error.message }, error.type);
      }
    });
  });
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => done());
  });
  let keyId = aliases.get(DEFAULT_ALIAS);
  if (!keyId || !keys.has(keyId)) {
    keyId = createKey('Model gateway vault and BYOK (local)').id;
    aliases.set(DEFAULT_ALIAS, keyId);
    save();
  }
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    keyArn: arnOf(keyId),
    calls,
    get listening() {
      return server.listening;
    },
    close: () => new Promise<void>((done) => {
      server.closeAllConnections();
      server.close(() => done());
    }),
  };
}

export const DEFAULT_ALIAS = 'alias/model-gateway';
