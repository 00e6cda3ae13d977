// One structured log line (JSON, one per line, for CloudWatch Logs Insights and the local logger): the level,
// the message, then the fields, in that order. EMF metric lines have their own format (billing/metrics.ts).
export type LogLevel = 'info' | 'warn' | 'error';

export function logLine(level: LogLevel, message: string, fields: Record<string, unknown> = {}): string {
  return JSON.stringify({ level, message, ...fields });
}
