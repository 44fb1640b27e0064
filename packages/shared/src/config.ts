import { z } from 'zod';
import { withPortBase, type StackService } from './ports.js';

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * Parses environment variables against a zod schema once at start-up, so a
 * service with a bad setting refuses to start with one clear message instead
 * of failing later.
 */
export function loadConfig<S extends z.ZodType>(
  schema: S,
  env: NodeJS.ProcessEnv = process.env,
  options: {
    /** Fill unset ports and addresses from PORT_BASE with this service's layout (ports.ts). */
    service?: StackService;
  } = {},
): z.infer<S> {
  let source: Record<string, string | undefined> = env;
  if (options.service) {
    try {
      source = withPortBase(env, options.service);
    } catch (err) {
      throw new ConfigError(`invalid configuration:\n  PORT_BASE: ${(err as Error).message}`);
    }
  }
  // Empty strings mean "unset" so `FOO= npm start` behaves like no FOO at all.
  const cleaned = Object.fromEntries(
    Object.entries(source).filter(([, v]) => v !== undefined && v !== ''),
  );
  const result = schema.safeParse(cleaned);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join('.') || '(env)'}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  return result.data;
}

/** A `host:port` address. */
export const hostPort = z
  .string()
  .regex(/^[^\s:]+:\d{1,5}$/, 'expected host:port')
  .transform((s) => {
    const i = s.lastIndexOf(':');
    return { host: s.slice(0, i), port: Number(s.slice(i + 1)), address: s };
  });

export const port = z.coerce.number().int().min(0).max(65535);

export const boolFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

export const logLevel = z
  .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  .default('info');

export { z };
