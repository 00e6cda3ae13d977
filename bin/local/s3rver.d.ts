// The part of s3rver 3.x that bin/local/s3.ts uses (the package ships no types).
declare module 's3rver' {
  interface S3rverOptions {
    port?: number;
    address?: string;
    silent?: boolean;
    directory: string;
  }
  export default class S3rver {
    constructor(options: S3rverOptions);
    run(): Promise<{ address: string; port: number }>;
    close(): Promise<void>;
  }
}

declare module 's3rver/lib/models/error.js' {
  export default class S3Error extends Error {
    constructor(code: string, message: string, detail?: Record<string, unknown>);
  }
}
