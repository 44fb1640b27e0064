import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { activeTraceIds } from './trace-context.js';

export type { Logger };

/**
 * Paths redacted from every log line: credentials must never reach logs,
 * whatever object they arrive in.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["proxy-authorization"]',
  'req.headers["x-api-key"]',
  'req.headers["x-admin-token"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers["proxy-authorization"]',
  'headers["x-api-key"]',
  'headers["x-admin-token"]',
  'headers.cookie',
  'authorization',
  'apiKey',
  'key',
  '*.key',
  '*.apiKey',
  'token',
  '*.token',
  'password',
  '*.password',
  'adminToken',
];

/** JSON logs on stdout, one logger per service. */
export function createLogger(
  service: string,
  level: string = process.env.LOG_LEVEL ?? 'info',
  /** Where lines go instead of stdout (tests read them). */
  destination?: DestinationStream,
): Logger {
  const options: LoggerOptions = {
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    formatters: { level: (label) => ({ level: label }) },
    // With tracing on, every line logged inside a span names it (trace_id, span_id).
    mixin: () => activeTraceIds() ?? {},
  };
  return destination ? pino(options, destination) : pino(options);
}

/** Replaces the password of a connection URL so it can be logged. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '[unparseable url]';
  }
}
