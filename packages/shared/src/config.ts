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

/**
 * The one naming rule: every setting is an upper-snake environment variable, declared once in
 * its service's zod schema with `.describe()` (what docs/configuration.md lists) and read
 * through loadConfig. A renamed variable keeps its old name as an alias (see `aliases`).
 */

/** An integer setting from `min` to `max`. */
export const intEnv = (min: number, max: number, fallback: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

/** A fraction from 0 to 1. */
export const unitEnv = (fallback: number) => z.coerce.number().min(0).max(1).default(fallback);

/**
 * A server URL, or a comma-separated list of them, each with one of `protocols`
 * (e.g. `['nats:', 'tls:']`). Unset selects the embedded adapter where a service has one.
 */
export const serverUrl = (protocols: string[]) =>
  z.string().refine(
    (v) =>
      v.split(',').every((s) => {
        try {
          return protocols.includes(new URL(s.trim()).protocol);
        } catch {
          return false;
        }
      }),
    `expected a ${protocols.map((p) => `${p}//`).join(' or ')} URL`,
  );

/**
 * The rule of every service with embedded adapters: outside `npm start` (EMBEDDED=true) each
 * of `names` must be set, so a deployment missing one refuses to start instead of writing to
 * local files. Use as `.superRefine(requiredUnlessEmbedded([...]))`.
 */
export function requiredUnlessEmbedded<K extends string>(names: readonly K[]) {
  return (config: { EMBEDDED: boolean } & Partial<Record<K, unknown>>, ctx: z.RefinementCtx) => {
    if (config.EMBEDDED) return;
    for (const name of names) {
      if (config[name] === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: `${name} is required (set it, or EMBEDDED=true to use the embedded fallback)`,
        });
      }
    }
  };
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
  .default('info')
  .describe('pino log level: fatal, error, warn, info, debug, trace or silent.');

/** Variables every service reads with the same meaning; spread into each service's schema. */
export const commonEnv = {
  EMBEDDED: boolFlag
    .default(false)
    .describe('Allow the embedded adapters for unset backend URLs (`npm start` sets it).'),
  DATA_DIR: z
    .string()
    .default('./data')
    .describe('Where the embedded adapters keep their files, one folder per service.'),
  LOG_LEVEL: logLevel,
};

export { z };
