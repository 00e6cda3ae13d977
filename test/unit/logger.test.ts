// The one structured logger: the line format of each call, the EMF line passed through as it is, and a sink
// replaced after composition reaching everything composed over the logger.
import { describe, expect, it } from '@jest/globals';
import { entryLine, Logger } from '../../lambdas/platform/logger.js';

describe('Logger', () => {
  it('writes one JSON line per call: level, message, then the fields in their order', () => {
    const lines: string[] = [];
    const log = new Logger((line) => { lines.push(line); });
    log.info('expired holds released', { released: 2 });
    log.warn('settlement attempt failed', { generation_id: 'gen-1', attempt: 2, error: 'Error: boom' });
    log.error('hold not released');
    expect(lines).toEqual([
      '{"level":"info","message":"expired holds released","released":2}',
      '{"level":"warn","message":"settlement attempt failed","generation_id":"gen-1","attempt":2,"error":"Error: boom"}',
      '{"level":"error","message":"hold not released"}',
    ]);
  });

  it('writes an entry with the level first and the fields in their own order (no message unless a field says one)', () => {
    const lines: string[] = [];
    const log = new Logger((line) => { lines.push(line); });
    log.entry('error', { request_id: 'r-1', status: 500, error: { name: 'Error', message: 'x' } });
    log.entry('error', { request_id: 'r-2', message: 'handler failed after the first byte', error: 'Error: y' });
    expect(lines).toEqual([
      '{"level":"error","request_id":"r-1","status":500,"error":{"name":"Error","message":"x"}}',
      '{"level":"error","request_id":"r-2","message":"handler failed after the first byte","error":"Error: y"}',
    ]);
    expect(entryLine('warn', { a: undefined, b: 1 })).toBe('{"level":"warn","b":1}');
  });

  it('passes a raw line (an EMF metrics line) through byte for byte', () => {
    const lines: string[] = [];
    const emf = '{"_aws":{"Timestamp":1,"CloudWatchMetrics":[]},"Model":"m","Requests":1}';
    new Logger((line) => { lines.push(line); }).raw(emf);
    expect(lines).toEqual([emf]);
  });

  it('reads its sink on every call: a sink replaced after composition gets the lines of whatever holds the logger', () => {
    const before: string[] = [];
    const after: string[] = [];
    const log = new Logger((line) => { before.push(line); });
    const component = { warn: () => log.warn('composed earlier') };
    component.warn();
    log.sink = (line) => { after.push(line); };
    component.warn();
    expect(before).toEqual(['{"level":"warn","message":"composed earlier"}']);
    expect(after).toEqual(['{"level":"warn","message":"composed earlier"}']);
  });
});
