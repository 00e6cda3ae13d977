// A batch's objects in the batch bucket: its input as JSON Lines (written once at creation, then read as a
// stream by the validating step and by byte ranges by the workers). The same code talks to S3 on AWS and to
// the local stand-in under npm start.
import {
  CompleteMultipartUploadCommand, CreateMultipartUploadCommand, DeleteObjectCommand, DeleteObjectsCommand, GetObjectCommand, HeadObjectCommand,
  PutObjectCommand, UploadPartCommand, type S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { Readable } from 'node:stream';

/** Parts of a streamed upload (S3's minimum is 5 MiB): at most two are held at once. */
const PART_BYTES = 8 * 1024 * 1024;

export class BatchObjects {
  constructor(private readonly s3: S3Client, readonly bucket: string) {}

  inputKey(batchId: string): string {
    return `batches/${batchId}/input.jsonl`;
  }

  outputKey(batchId: string): string {
    return `batches/${batchId}/results.jsonl`;
  }

  /** Stores a batch's results file from a stream of text (a multipart upload; never held whole). */
  async writeOutput(batchId: string, lines: AsyncIterable<string>): Promise<string> {
    const key = this.outputKey(batchId);
    const upload = new Upload({
      client: this.s3,
      params: { Bucket: this.bucket, Key: key, Body: Readable.from(lines), ContentType: 'application/jsonl; charset=utf-8' },
      partSize: PART_BYTES,
      queueSize: 2,
    });
    await upload.done();
    return key;
  }

  /** A URL that reads the object for `expiresSeconds`, downloaded as `filename`. */
  downloadUrl(key: string, filename: string, expiresSeconds: number): Promise<string> {
    return getSignedUrl(this.s3, new GetObjectCommand({
      Bucket: this.bucket, Key: key, ResponseContentDisposition: `attachment; filename="${filename}"`, ResponseContentType: 'application/jsonl; charset=utf-8',
    }), { expiresIn: expiresSeconds });
  }

  /** Stores a batch's input; resolves once S3 has it (durably). */
  async putInput(batchId: string, body: Buffer): Promise<{ bucket: string; key: string; bytes: number }> {
    const key = this.inputKey(batchId);
    await this.s3.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: 'application/jsonl', ContentLength: body.length }));
    return { bucket: this.bucket, key, bytes: body.length };
  }

  /** The whole object as a stream of chunks (never buffered whole). */
  async read(key: string): Promise<AsyncIterable<Uint8Array>> {
    const { Body } = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    if (!Body) throw new Error(`batch object ${key} has no body`);
    return Body as Readable;
  }

  /** Bytes [start, end) of an object (one ranged GET). */
  async readRange(key: string, start: number, end: number): Promise<Buffer> {
    if (end <= start) return Buffer.alloc(0);
    const { Body } = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: `bytes=${start}-${end - 1}` }));
    if (!Body) throw new Error(`batch object ${key} has no body`);
    return Buffer.from(await Body.transformToByteArray());
  }

  uploadKey(uploadId: string): string {
    return `batches/uploads/${uploadId}/input.jsonl`;
  }

  /** Begins a multipart upload of `key`: S3's id of it. */
  async startUpload(key: string): Promise<string> {
    const { UploadId } = await this.s3.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key, ContentType: 'application/jsonl' }));
    if (!UploadId) throw new Error(`S3 gave no upload id for ${key}`);
    return UploadId;
  }

  /** A URL that PUTs part `partNumber` (of `bytes` bytes, which the signature fixes) for `expiresSeconds`. */
  partUrl(key: string, uploadId: string, partNumber: number, bytes: number, expiresSeconds: number): Promise<string> {
    return getSignedUrl(this.s3, new UploadPartCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, PartNumber: partNumber, ContentLength: bytes }), { expiresIn: expiresSeconds });
  }

  async completeUpload(key: string, uploadId: string, parts: ReadonlyArray<{ part_number: number; etag: string }>): Promise<void> {
    await this.s3.send(new CompleteMultipartUploadCommand({
      Bucket: this.bucket, Key: key, UploadId: uploadId,
      MultipartUpload: { Parts: parts.map((part) => ({ PartNumber: part.part_number, ETag: part.etag })) },
    }));
  }

  /** The object's size in bytes, or undefined when there is none. */
  async size(key: string): Promise<number | undefined> {
    try {
      const head = await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return head.ContentLength;
    } catch (err) {
      if ((err as { name?: string }).name === 'NotFound' || (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return undefined;
      throw err;
    }
  }

  async deleteObject(key: string): Promise<void> {
    await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  /** Deletes a batch's input (where it is: `inputKey`, uploaded or not) and results file. */
  async deleteBatch(batchId: string, inputKey = this.inputKey(batchId)): Promise<void> {
    await this.s3.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: [{ Key: inputKey }, { Key: this.outputKey(batchId) }], Quiet: true } }));
  }
}
