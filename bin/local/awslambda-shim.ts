// The Lambda runtime's `awslambda` global for local use: streaming handlers get Node's ServerResponse
// (or any Writable) as their response stream, so bytes reach the client as they are written.
import type { Writable } from 'node:stream';

interface Prelude {
  statusCode?: number;
  headers?: Record<string, string>;
  cookies?: string[];
}

interface HeaderWritable extends Writable {
  writeHead?: (status: number, headers: Record<string, string | string[]>) => unknown;
  prelude?: Prelude;
}

export const STREAMING_MARK = Symbol.for('aws.lambda.runtime.handler.streaming');

export function installAwsLambdaShim(): void {
  // The AWS SDK may already have created an empty `awslambda` object; fill in what the runtime would provide.
  const scope = globalThis as unknown as { awslambda?: Record<string, unknown> };
  const existing = scope.awslambda ?? {};
  if (typeof existing.streamifyResponse === 'function') return;
  scope.awslambda = Object.assign(existing, {
    streamifyResponse<T extends (...args: never[]) => unknown>(handler: T): T {
      (handler as unknown as Record<symbol, string>)[STREAMING_MARK] = 'response';
      return handler;
    },
    HttpResponseStream: {
      from(stream: HeaderWritable, prelude: Prelude): HeaderWritable {
        if (typeof stream.writeHead === 'function') {
          const headers: Record<string, string | string[]> = { ...prelude.headers };
          if (prelude.cookies?.length) headers['set-cookie'] = prelude.cookies;
          stream.writeHead(prelude.statusCode ?? 200, headers);
        } else {
          stream.prelude = prelude;
        }
        return stream;
      },
    },
  });
}

export function isStreamingHandler(handler: unknown): boolean {
  return typeof handler === 'function' && (handler as unknown as Record<symbol, unknown>)[STREAMING_MARK] === 'response';
}
