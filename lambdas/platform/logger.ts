// The one structured logger: a JSON line per call (level, message, then the fields, in that order, for
// CloudWatch Logs Insights and the local logger), written to a sink the local runtime may replace.
export type LogLevel = 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;
/** Where lines go: stdout on Lambda (CloudWatch Logs), the local runtime's sink under npm start, an array in tests. */
export type LogSink = (line: string) => void;

export function logLine(level: LogLevel, message: string, fields: LogFields = {}): string {
  return JSON.stringify({ level, message, ...fields });
}

/** A line whose fields set their own order after the level (the error reply's has no message). */
export function entryLine(level: LogLevel, fields: LogFields): string {
  return JSON.stringify({ level, ...fields });
}

export class Logger {
  /**
   * Read on every call, never captured: everything composed over this logger (engine, ledger, dispatch,
   * operations) follows when the local runtime points it elsewhere.
   */
  sink: LogSink;

  constructor(sink: LogSink) {
    this.sink = sink;
  }

  info(message: string, fields?: LogFields): void {
    this.sink(logLine('info', message, fields));
  }

  warn(message: string, fields?: LogFields): void {
    this.sink(logLine('warn', message, fields));
  }

  error(message: string, fields?: LogFields): void {
    this.sink(logLine('error', message, fields));
  }

  entry(level: LogLevel, fields: LogFields): void {
    this.sink(entryLine(level, fields));
  }

  /** A line in a format of its own, written as it is: the EMF metrics lines CloudWatch parses (billing/metrics.ts). */
  raw(line: string): void {
    this.sink(line);
  }
}

/** A logger to the console: stdout, where Lambda's lines go, or stderr (errors before any deps exist). */
export function consoleLogger(stream: 'stdout' | 'stderr' = 'stdout'): Logger {
  return new Logger(stream === 'stdout' ? (line) => console.log(line) : (line) => console.error(line));
}
