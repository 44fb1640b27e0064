import { z } from 'zod';
import { parseGrpcTarget } from './grpc-target.js';
import { withPortBase, type StackService } from './ports.js';
import { HOUR_MS } from './time.js';
import { REDIS_COMMAND_TIMEOUT_MS } from './redis-options.js';

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
 * local files (serviceConfig applies it).
 */
function requireUnlessEmbedded(
  config: Record<string, unknown>,
  names: readonly string[],
  ctx: z.RefinementCtx,
): void {
  if (config.EMBEDDED) return;
  for (const name of names.filter((n) => config[n] === undefined)) {
    ctx.addIssue({
      code: 'custom',
      path: [name],
      message: `${name} is required (set it, or EMBEDDED=true to use the embedded fallback)`,
    });
  }
}

/**
 * The same rule for a config object built or changed by hand (tests, tools), checked again by
 * a service's start(): throws ConfigError naming every missing variable.
 */
export function assertRunnable<K extends string>(
  config: { EMBEDDED: boolean } & Partial<Record<K, unknown>>,
  names: readonly K[],
): void {
  if (config.EMBEDDED) return;
  const missing = names.filter((name) => config[name] === undefined);
  if (missing.length > 0) {
    throw new ConfigError(
      `${missing.join(', ')} required: the embedded fallback only applies under \`npm start\` (EMBEDDED=true)`,
    );
  }
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

/** The gRPC port of each service when neither its `*_ADDR` nor PORT_BASE is set. */
const GRPC_PORTS = { tickets: 50051, knowledge: 50052, answers: 50053, digest: 50054 } as const;

/**
 * `TICKETS_ADDR`, `KNOWLEDGE_ADDR`, …: the gRPC address of `service`, the one a service
 * listens on or the one its callers dial (127.0.0.1 and its own port by default).
 */
export const serviceAddr = (service: keyof typeof GRPC_PORTS, description: string) =>
  hostPort.prefault(`127.0.0.1:${GRPC_PORTS[service]}`).describe(description);

/**
 * The `*_ADDR` of a service its callers dial: one `host:port` (a DNS name stands for every
 * address it resolves to), `dns:///name:port`, or several replicas as `ip:port,ip:port`
 * (grpc-target.ts). Calls are spread over the replicas and skip a dead one (grpc.ts).
 */
export const serviceTarget = (service: keyof typeof GRPC_PORTS, description: string) =>
  z
    .string()
    .transform((s, ctx) => {
      const target = parseGrpcTarget(s);
      if ('error' in target) {
        ctx.addIssue({ code: 'custom', message: target.error });
        return z.NEVER;
      }
      return target;
    })
    .prefault(`127.0.0.1:${GRPC_PORTS[service]}`)
    .describe(description);

/**
 * The backend URLs. Each one set selects the real adapter; an unset one selects the embedded
 * adapter, which serviceConfig allows only with EMBEDDED=true. `holds` says what
 * the service keeps there.
 */
export const backendUrl = {
  mysql: (holds: string) =>
    serverUrl(['mysql:']).optional().describe(`mysql://user:pass@host:port/db: ${holds}`),
  redis: (holds: string) =>
    serverUrl(['redis:', 'rediss:']).optional().describe(`redis://host:port: ${holds}`),
  nats: (holds: string) =>
    serverUrl(['nats:', 'tls:']).optional().describe(`nats://host:port[,nats://…]: ${holds}`),
};

/**
 * OPENAI_API_KEY and OPENAI_BASE_URL: an OpenAI-compatible server, used for `purpose` when
 * either is set (openAiConfigured); unset = the service's built-in provider.
 */
export const openAiEnv = (purpose: string) => ({
  OPENAI_API_KEY: z.string().optional().describe(`With OPENAI_BASE_URL or alone: ${purpose}`),
  OPENAI_BASE_URL: serverUrl(['http:', 'https:'])
    .optional()
    .describe('Any OpenAI-compatible server (https://api.openai.com/v1 when only the key is set).'),
});

/** True when an OpenAI-compatible server is configured (DESIGN.md "LLM and embeddings"). */
export function openAiConfigured(config: {
  OPENAI_API_KEY?: string | undefined;
  OPENAI_BASE_URL?: string | undefined;
}): boolean {
  return config.OPENAI_API_KEY !== undefined || config.OPENAI_BASE_URL !== undefined;
}

/** Settings several services share, each with the same name and meaning everywhere. */
export const sharedSetting = {
  /** MYSQL_POOL_SIZE. */
  mysqlPoolSize: (fallback: number) =>
    intEnv(1, 500, fallback).describe('Connections in the MySQL pool.'),
  /** NATS_STREAM_REPLICAS, for a service that may be the first to create the stream. */
  streamReplicas: () =>
    intEnv(1, 5, 1).describe(
      'Replicas of the ticket events stream if this service is the one creating it (3 on a NATS cluster).',
    ),
  /** REDIS_COMMAND_TIMEOUT_MS of a service with a Redis client (failFastRedisOptions). */
  redisCommandTimeout: () =>
    intEnv(20, 60_000, REDIS_COMMAND_TIMEOUT_MS).describe(
      'A Redis command not answered within this fails (the in-process fallback answers) and the connection is reopened: a silent or slow Redis is treated like a dead one.',
    ),
  /** GRPC_DEADLINE_MS of a service that calls `callees`. */
  grpcDeadline: (callees: string) =>
    intEnv(100, 120_000, 5_000).describe(`Deadline of each call to ${callees}.`),
  /** The ack wait of a durable consumer of the ticket events; `note` ends its description. */
  eventAckWait: (note = '') =>
    intEnv(1_000, HOUR_MS, 30_000).describe(
      `JetStream redelivers an event not acknowledged within this${note}.`,
    ),
  /** SHUTDOWN_GRACE_MS: how long `what` may take to finish at shutdown. */
  shutdownGrace: (what: string, max = 120_000) =>
    intEnv(0, max, 10_000).describe(`${what} get this long to finish at shutdown.`),
  /** The model a service asks of the OpenAI-compatible server (openAiEnv). */
  model: (fallback: string, description: string) =>
    z.string().min(1).default(fallback).describe(description),
  /** Retries of `call` to the OpenAI-compatible server (the `openai` client's maxRetries). */
  openAiRetries: (fallback: number, call: string) =>
    intEnv(0, 10, fallback).describe(
      `Retries of ${call} after 429, 5xx, timeouts and connection errors.`,
    ),
  /** The time budget of one LLM step, after which the service's built-in provider answers. */
  llmTimeout: (description: string) => intEnv(100, 300_000, 8_000).describe(description),
};

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
    .describe(
      'Where the embedded adapters keep their files, one folder per service; made owner-only at start in embedded mode (0700, files 0600).',
    ),
  LOG_LEVEL: logLevel,
};

/**
 * Environment of the metrics endpoint, in every service's schema. It binds loopback unless
 * METRICS_HOST says otherwise: containers, where Prometheus scrapes from outside, set
 * METRICS_HOST=0.0.0.0 (docker-compose `.env`, the k8s ConfigMap).
 */
export const metricsEnv = {
  METRICS_PORT: port
    .default(9464)
    .describe('Port of the Prometheus `GET /metrics` endpoint; 0 disables it.'),
  METRICS_HOST: z
    .string()
    .min(1)
    .default('127.0.0.1')
    .describe('Interface the metrics endpoint binds (0.0.0.0 in containers).'),
};

/**
 * A service's configuration: its own `settings`, then the variables every service reads
 * (commonEnv, metricsEnv), with `required` backends enforced outside `npm start`
 * (requireUnlessEmbedded). `schema` is what docs/configuration.md lists; `load(env)` reads
 * and validates the environment once at start-up.
 */
export function serviceConfig<T extends z.ZodRawShape>(
  service: StackService,
  settings: T,
  required: readonly (keyof T & string)[],
) {
  const schema = z
    .object({ ...settings, ...commonEnv, ...metricsEnv })
    .superRefine((config, ctx) =>
      requireUnlessEmbedded(config as Record<string, unknown>, required, ctx),
    );
  /** Unset ports and addresses are filled from PORT_BASE; throws ConfigError naming every bad variable. */
  const load = (env: NodeJS.ProcessEnv = process.env): z.infer<typeof schema> =>
    loadConfig(schema, env, { service });
  return { schema, load };
}

export { z };
