import { describe, expect, it } from '@jest/globals';
import { logLine } from '../../lambdas/platform/logger.js';

describe('logLine', () => {
  it('writes level, message, then the fields in their order, as one JSON line', () => {
    expect(logLine('warn', 'settlement attempt failed', { generation_id: 'gen-1', attempt: 2, error: 'Error: boom' }))
      .toBe('{"level":"warn","message":"settlement attempt failed","generation_id":"gen-1","attempt":2,"error":"Error: boom"}');
  });

  it('leaves out undefined fields and needs no fields at all', () => {
    expect(logLine('info', 'request', { request_id: undefined, ms: 3 })).toBe('{"level":"info","message":"request","ms":3}');
    expect(logLine('error', 'done')).toBe('{"level":"error","message":"done"}');
  });
});
