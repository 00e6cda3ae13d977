import { describe, expect, it } from '@jest/globals';
import { configFromEnv } from '../../bin/local/runtime.js';

describe('npm start configuration of the local server', () => {
  it('reads the header and body deadlines and the connection cap; GATEWAY_REQUEST_TIMEOUT_MS is the inference deadline, not the server\'s', () => {
    expect(configFromEnv({ GATEWAY_HEADERS_TIMEOUT_MS: '2000', GATEWAY_BODY_TIMEOUT_MS: '30000', GATEWAY_MAX_CONNECTIONS: '64' }).serverLimits)
      .toEqual({ headersTimeoutMs: 2000, requestTimeoutMs: 30_000, maxConnections: 64 });
    expect(configFromEnv({ GATEWAY_REQUEST_TIMEOUT_MS: '5000' }).serverLimits).toEqual({});
  });

  it('refuses a header deadline longer than the body deadline with the names of both settings', () => {
    expect(() => configFromEnv({ GATEWAY_HEADERS_TIMEOUT_MS: '20000', GATEWAY_BODY_TIMEOUT_MS: '10000' }))
      .toThrow('GATEWAY_HEADERS_TIMEOUT_MS (20000) must not exceed GATEWAY_BODY_TIMEOUT_MS (10000)');
    expect(() => configFromEnv({ GATEWAY_HEADERS_TIMEOUT_MS: '90000' })).toThrow(/must not exceed GATEWAY_BODY_TIMEOUT_MS \(60000\)/);
  });
});
