// The hand-signed DynamoDB JSON client of the page writes (lambdas/platform/dynamo/json-client.ts): its
// SigV4 signature is the SDK's own signer's, to the byte; its signing key is made once a day; its endpoint is
// the configured one or the region's, as the SDK's rules give it.
import { describe, expect, it } from '@jest/globals';
import { createHash, createHmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { DynamoJsonClient, jsonClientConfigOf, requestTimeoutMs, signedHeaders, SigningKeyCache } from '../../lambdas/platform/dynamo/json-client.js';

/** The SDK signer's hash, over node:crypto. */
type Bytes = string | ArrayBuffer | ArrayBufferView;
const bytes = (data: Bytes) => (typeof data === 'string' ? Buffer.from(data) : ArrayBuffer.isView(data) ? Buffer.from(data.buffer, data.byteOffset, data.byteLength) : Buffer.from(data));
class Sha256 {
  private readonly hash;
  constructor(secret?: Bytes) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: Bytes): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
}

const body = '{"TableName":"gateway","Item":{"pk":{"S":"GENS#ABC"},"sk":{"S":"P#0001"},"data":{"B":"AAEC"}},"ConditionExpression":"attribute_not_exists(pk)"}';
const at = new Date('2026-11-24T12:16:25.123Z');

async function sdkSignature(credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }, host: string, region: string): Promise<Record<string, string>> {
  const signer = new SignatureV4({ credentials, region, service: 'dynamodb', sha256: Sha256, applyChecksum: false });
  const signed = await signer.sign({
    method: 'POST', protocol: 'https:', hostname: host.split(':')[0]!, path: '/', query: {},
    headers: { 'content-type': 'application/x-amz-json-1.0', host, 'x-amz-target': 'DynamoDB_20120810.PutItem' }, body,
  }, { signingDate: at });
  return signed.headers as Record<string, string>;
}

describe('DynamoDB JSON client', () => {
  it.each([
    ['a Lambda role (session token)', { accessKeyId: 'ASIAEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: 'IQoJb3JpZ2luX2VjEXAMPLE/+token=' }, 'dynamodb.eu-west-1.amazonaws.com', 'eu-west-1'],
    ['long-term keys', { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }, 'dynamodb.us-east-1.amazonaws.com', 'us-east-1'],
    ['DynamoDB Local on a port', { accessKeyId: 'local', secretAccessKey: 'local' }, '127.0.0.1:8000', 'local'],
  ])('signs a request exactly as the SDK\'s SigV4 signer does: %s', async (_name, credentials, host, region) => {
    const ours = signedHeaders({ host, target: 'DynamoDB_20120810.PutItem', body, region, credentials, at });
    expect(ours).toEqual(await sdkSignature(credentials, host, region));
    expect(ours.authorization).toMatch(new RegExp(`^AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/20261124/${region}/dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-date;(x-amz-security-token;)?x-amz-target, Signature=[0-9a-f]{64}$`));
  });

  it('sends what it signed: the request a server receives verifies with the SDK\'s signer', async () => {
    const received: Array<{ headers: IncomingMessage['headers']; url: string; body: string }> = [];
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let text = '';
      req.on('data', (chunk: Buffer) => { text += chunk.toString(); });
      req.on('end', () => {
        received.push({ headers: req.headers, url: req.url ?? '', body: text });
        res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
        res.end('{"ConsumedCapacity":{"TableName":"gateway","CapacityUnits":1.0}}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const credentials = { accessKeyId: 'ASIAEXAMPLE', secretAccessKey: 'secret', sessionToken: 'token' };
    const client = new DynamoJsonClient({ credentials: async () => credentials, region: async () => 'eu-west-1', endpoint: async () => new URL(`http://127.0.0.1:${port}/`) }, () => at);
    try {
      expect(await client.send('PutItem', body)).toEqual({ ConsumedCapacity: { TableName: 'gateway', CapacityUnits: 1 } });
      const [request] = received;
      expect(request!.url).toBe('/');
      expect(request!.body).toBe(body);
      expect(request!.headers['x-amz-target']).toBe('DynamoDB_20120810.PutItem');
      expect(request!.headers.authorization).toBe((await sdkSignature(credentials, request!.headers.host!, 'eu-west-1')).authorization);
    } finally {
      client.destroy();
      server.close();
    }
  });

  it('sends a request again, once, when its kept-alive connection turns out to be closed', async () => {
    let requests = 0;
    const perSocket = new WeakMap<object, number>();
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      requests += 1;
      const seen = (perSocket.get(req.socket) ?? 0) + 1;
      perSocket.set(req.socket, seen);
      req.resume();
      // The second request on a connection finds it closed, as after an idle close or a frozen Lambda.
      if (seen === 2) {
        req.socket.destroy();
        return;
      }
      req.on('end', () => res.end('{}'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const client = new DynamoJsonClient({ credentials: async () => ({ accessKeyId: 'a', secretAccessKey: 'b' }), region: async () => 'local', endpoint: async () => new URL(`http://127.0.0.1:${port}/`) });
    try {
      expect(await client.send('PutItem', body)).toEqual({});
      expect(await client.send('PutItem', body)).toEqual({});
      expect(requests).toBe(3);
    } finally {
      client.destroy();
      server.close();
    }
  });

  it('gives DynamoDB Local (an endpoint on this machine) a minute to answer, AWS five seconds, unless told otherwise', () => {
    for (const local of ['http://127.0.0.1:8000/', 'http://localhost:8000/', 'http://[::1]:8000/', 'http://127.1.2.3:8000/']) expect(requestTimeoutMs({}, new URL(local))).toBe(60_000);
    for (const remote of ['https://dynamodb.us-east-1.amazonaws.com/', 'https://vpce-1.dynamodb.eu-west-1.vpce.amazonaws.com/', 'http://10.0.0.5:8000/', 'http://127.0.0.1.example.com/']) {
      expect(requestTimeoutMs({}, new URL(remote))).toBe(5000);
    }
    expect(requestTimeoutMs({ timeoutMs: 250 }, new URL('http://127.0.0.1:8000/'))).toBe(250);
  });

  it('makes the signing key once per secret, day and region', () => {
    const keys = new SigningKeyCache();
    const first = keys.key('secret', '20261124', 'eu-west-1');
    expect(keys.key('secret', '20261124', 'eu-west-1')).toBe(first);
    expect(keys.key('secret', '20261125', 'eu-west-1')).not.toEqual(first);
    expect(keys.key('rotated', '20261125', 'eu-west-1')).not.toEqual(keys.key('secret', '20261125', 'eu-west-1'));
  });

  it('takes the SDK client\'s credentials, region and endpoint: a configured one, or the region\'s', async () => {
    const local = jsonClientConfigOf(new DynamoDBClient({ endpoint: 'http://127.0.0.1:8123', region: 'local', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } }));
    expect((await local.endpoint()).href).toBe('http://127.0.0.1:8123/');
    expect(await local.region()).toBe('local');
    expect(await local.credentials()).toMatchObject({ accessKeyId: 'a', secretAccessKey: 'b' });
    expect((await jsonClientConfigOf(new DynamoDBClient({ region: 'eu-west-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } })).endpoint()).href).toBe('https://dynamodb.eu-west-1.amazonaws.com/');
    expect((await jsonClientConfigOf(new DynamoDBClient({ region: 'cn-north-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } })).endpoint()).href).toBe('https://dynamodb.cn-north-1.amazonaws.com.cn/');
  });
});
