// The local runtime's log sink: what reaches the console and the log file in each format.
import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalLogger, logFormatFromEnv } from '../../bin/local/logger.js';
import { emfLine, isEmfLine } from '../../lambdas/billing/metrics.js';
import { generationRecord } from '../support/records.js';

const EMF = JSON.stringify({ _aws: { Timestamp: 1, CloudWatchMetrics: [] }, Model: 'simulator/echo', UpstreamCostUSD: 0.000123, generation_id: 'gen-1' });
const WARNING = JSON.stringify({ level: 'warn', message: 'settlement attempt failed' });
const DONE = { method: 'POST', path: '/api/v1/chat/completions', status: 200, ms: 41.6, requestId: 'req-1', generationId: 'gen-1' };

function capture(format: 'text' | 'json', file?: string) {
  const out: string[] = [];
  const err: string[] = [];
  const logger = createLocalLogger({ format, file, out: (text) => out.push(text), err: (text) => err.push(text) });
  return { logger, out, err };
}

describe('local logger', () => {
  it('recognizes metrics lines', () => {
    expect(isEmfLine(EMF)).toBe(true);
    expect(isEmfLine(WARNING)).toBe(false);
  });

  it('text (default): one short line per request with the model and cost of its generation; warnings on stderr; no metrics', () => {
    const { logger, out, err } = capture('text');
    logger.line(EMF);
    logger.line(WARNING);
    logger.request(DONE);
    expect(out).toEqual([expect.stringMatching(/^\d\d:\d\d:\d\d POST \/api\/v1\/chat\/completions 200 simulator\/echo 42 ms \$0\.000123\n$/)]);
    expect(err).toEqual([`${WARNING}\n`]);
  });

  it('a stored generation gives its request line the model and cost; text writes no metrics line, json and the log file do', async () => {
    const record = generationRecord('gen-2', { model: 'simulator/echo', cost: { ...generationRecord('x').cost, total: 123_456n } });
    const text = capture('text');
    text.logger.generation(record, 1_700_000_000_000);
    text.logger.request({ ...DONE, generationId: 'gen-2' });
    expect(text.out).toEqual([expect.stringMatching(/ 200 simulator\/echo 42 ms \$0\.000123\n$/)]);
    expect(text.err).toEqual([]);

    const json = capture('json');
    json.logger.generation(record, 1_700_000_000_000);
    json.logger.request({ ...DONE, generationId: 'gen-2' });
    expect(json.out[0]).toBe(`${emfLine(record, undefined, 1_700_000_000_000)}\n`);
    expect(JSON.parse(json.out[1]!)).toMatchObject({ generation_id: 'gen-2', model: 'simulator/echo', cost_usd: 0.000123456 });

    const file = join(mkdtempSync(join(tmpdir(), 'gateway-log-')), 'gateway.log');
    const filed = capture('text', file);
    filed.logger.generation(record, 1_700_000_000_000);
    await filed.logger.close();
    expect(readFileSync(file, 'utf8')).toBe(`${emfLine(record, undefined, 1_700_000_000_000)}\n`);
  });

  it('a generation a previous run settled (stored from its journal): its metrics line at its end, nothing for a request line', async () => {
    const record = generationRecord('gen-3', { model: 'simulator/echo', created_at: '2026-11-29T06:00:00.000Z', latency_ms: 1500 });
    const json = capture('json');
    json.logger.replayed(record);
    expect(json.out).toEqual([`${emfLine(record, undefined, Date.parse('2026-11-29T06:00:01.500Z'))}\n`]);
    // A request of this run with the same id (there is none) would not pick its cost up.
    json.logger.request({ ...DONE, generationId: 'gen-3' });
    expect(JSON.parse(json.out[1]!)).not.toHaveProperty('cost_usd');
    const text = capture('text');
    text.logger.replayed(record);
    expect(text.out).toEqual([]);
    expect(text.err).toEqual([]);
  });

  it('text: leaves out successful health probes', () => {
    const { logger, out } = capture('text');
    logger.request({ method: 'GET', path: '/health', status: 200, ms: 1, requestId: 'a' });
    logger.request({ method: 'GET', path: '/health', status: 503, ms: 1, requestId: 'b' });
    expect(out).toEqual([expect.stringMatching(/GET \/health 503 1 ms\n$/)]);
  });

  it('json: every line as on Lambda, metrics included, and a JSON line per request', () => {
    const { logger, out, err } = capture('json');
    logger.line(EMF);
    logger.request(DONE);
    expect(out[0]).toBe(`${EMF}\n`);
    expect(JSON.parse(out[1]!)).toEqual({ level: 'info', message: 'request', request_id: 'req-1', method: 'POST', path: '/api/v1/chat/completions', status: 200, ms: 42, generation_id: 'gen-1', model: 'simulator/echo', cost_usd: 0.000123 });
    expect(err).toEqual([]);
  });

  it('a log file gets every machine line while the console stays short', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'gateway-log-')), 'gateway.log');
    const { logger, out } = capture('text', file);
    logger.line(EMF);
    logger.request(DONE);
    await logger.close();
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines[0]).toBe(EMF);
    expect(JSON.parse(lines[1]!)).toMatchObject({ message: 'request', model: 'simulator/echo', cost_usd: 0.000123 });
    expect(out).toHaveLength(1);
  });

  it('writes request lines to stdout in batches, and at once after close', async () => {
    const writes: string[] = [];
    const real = process.stdout.write;
    process.stdout.write = ((text: string) => { writes.push(text); return true; }) as typeof process.stdout.write;
    try {
      const logger = createLocalLogger({ format: 'text', err: () => undefined });
      logger.request(DONE);
      logger.request({ ...DONE, requestId: 'req-2' });
      expect(writes).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 60));
      expect(writes).toHaveLength(1);
      expect(writes[0]!.split('\n')).toHaveLength(3);
      logger.request(DONE);
      await logger.close();
      expect(writes).toHaveLength(2);
      logger.request(DONE);
      expect(writes).toHaveLength(3);
    } finally {
      process.stdout.write = real;
    }
  });

  it('reads GATEWAY_LOG_FORMAT', () => {
    expect(logFormatFromEnv({})).toBe('text');
    expect(logFormatFromEnv({ GATEWAY_LOG_FORMAT: 'JSON' })).toBe('json');
    expect(logFormatFromEnv({ GATEWAY_LOG_FORMAT: 'emf' })).toBe('json');
    expect(() => logFormatFromEnv({ GATEWAY_LOG_FORMAT: 'xml' })).toThrow('GATEWAY_LOG_FORMAT must be text or json, got "xml"');
  });
});
