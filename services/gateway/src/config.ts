import {
  commonEnv,
  ConfigError,
  hostPort,
  intEnv,
  loadConfig,
  metricsEnv,
  port,
  requiredUnlessEmbedded,
  serverUrl,
  z,
} from '@support-agent/shared';

/** express 'trust proxy': off, on, a hop count, or a comma list of addresses/subnets. */
const trustProxy = z
  .string()
  .transform((v): boolean | number | string => {
    const s = v.trim().toLowerCase();
    if (['false', '0', 'no', 'off'].includes(s)) return false;
    if (['true', 'yes', 'on'].includes(s)) return true;
    if (/^[0-9]+$/.test(s)) return Number(s);
    return v.trim();
  })
  .default(false);

/** `https://app.example.com` → its origin; undefined for anything that is not just an origin. */
function parseOrigin(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  const bare = url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password;
  return ['http:', 'https:'].includes(url.protocol) && bare ? url.origin : undefined;
}

/** Comma-separated browser origins, normalized (`https://App.example/` → `https://app.example`). */
const originList = z
  .string()
  .transform((v, ctx): string[] => {
    const origins: string[] = [];
    const items = v.split(',').map((s) => s.trim());
    for (const item of items.filter(Boolean)) {
      const origin = parseOrigin(item);
      if (origin === undefined) {
        ctx.addIssue({
          code: 'custom',
          message: `"${item}" is not an origin like https://app.example.com`,
        });
        return z.NEVER;
      }
      origins.push(origin);
    }
    return origins;
  })
  .default([]);

/** Comma-separated issuer URLs (https, or http on a loopback host), normalized without a trailing slash. */
const issuerList = z
  .string()
  .transform((v, ctx): string[] => {
    const issuers: string[] = [];
    for (const item of v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      let url: URL | undefined;
      try {
        url = new URL(item);
      } catch {
        url = undefined;
      }
      const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url?.hostname ?? '');
      if (!url || !(url.protocol === 'https:' || (url.protocol === 'http:' && loopback))) {
        ctx.addIssue({ code: 'custom', message: `"${item}" is not an https:// issuer URL` });
        return z.NEVER;
      }
      issuers.push(item.replace(/\/+$/, ''));
    }
    return issuers;
  })
  .default([]);

/** Environment of the gateway (docs/configuration.md). */
export const configSchema = z
  .object({
    PORT: port.default(8080).describe('Port of the public API.'),
    HOST: z.string().default('0.0.0.0').describe('Interface the public API binds.'),
    ADMIN_PORT: port.default(8081).describe('Port of the admin API.'),
    ADMIN_HOST: z
      .string()
      .default('127.0.0.1')
      .describe('Interface the admin API binds (keep it private).'),
    ADMIN_TOKEN: z
      .string()
      .min(16, 'must be at least 16 characters')
      .optional()
      .describe(
        'Bearer token of the admin API; in embedded mode one is generated under DATA_DIR when unset.',
      ),
    MYSQL_URL: serverUrl(['mysql:'])
      .optional()
      .describe('mysql://user:pass@host:port/db: organizations, settings and API keys.'),
    REDIS_URL: serverUrl(['redis:', 'rediss:'])
      .optional()
      .describe('redis://host:port: rate limits shared by every replica; unset = in-memory.'),
    TICKETS_ADDR: hostPort.prefault('127.0.0.1:50051').describe('The tickets service.'),
    KNOWLEDGE_ADDR: hostPort.prefault('127.0.0.1:50052').describe('The knowledge service.'),
    ANSWERS_ADDR: hostPort.prefault('127.0.0.1:50053').describe('The answers service.'),
    DIGEST_ADDR: hostPort.prefault('127.0.0.1:50054').describe('The digest service.'),
    ...commonEnv,
    PUBLIC_BASE_URL: serverUrl(['http:', 'https:'])
      .optional()
      .describe(
        "The API's public origin (links, metadata); unset = each request's own address (Host, or a trusted proxy's X-Forwarded-*).",
      ),
    AUTHORIZATION_SERVERS: issuerList.describe(
      'Comma-separated https:// issuer URLs for the protected-resource metadata; default none.',
    ),
    TRUST_PROXY: trustProxy.describe(
      "express 'trust proxy': false, true, a hop count, or a comma list of addresses/subnets.",
    ),
    MCP_ALLOWED_ORIGINS: originList.describe(
      'Comma-separated browser origins allowed to call /api/mcp; other Origin headers get 403.',
    ),
    AUTH_FAILURES_PER_MIN_PER_IP: z.coerce
      .number()
      .int()
      .min(1)
      .default(20)
      .describe('Failed authentications allowed per client IP and minute.'),
    // The contract promises revocation and settings changes on every replica within 1 s.
    KEY_CACHE_TTL_MS: intEnv(0, 1000, 500).describe(
      'How long a key lookup is cached (at most 1 s: revocation applies within it).',
    ),
    GRPC_DEADLINE_MS: z.coerce
      .number()
      .int()
      .min(1)
      .default(5000)
      .describe('Deadline of each call to an upstream service.'),
    GRPC_BULK_DEADLINE_MS: z.coerce
      .number()
      .int()
      .min(1)
      .default(60_000)
      .describe('Deadline of the slow admin calls: each KB import batch, digest builds.'),
    SHUTDOWN_DELAY_MS: z.coerce
      .number()
      .int()
      .min(0)
      .default(0)
      .describe('Time between failing readiness and closing the listener, for load balancers.'),
    SHUTDOWN_GRACE_MS: z.coerce
      .number()
      .int()
      .min(0)
      .default(10_000)
      .describe('How long in-flight requests may take to finish before connections are cut.'),
    // Slow clients (slowloris): the whole header block, and the whole request, within these.
    HTTP_HEADERS_TIMEOUT_MS: z.coerce
      .number()
      .int()
      .min(100)
      .default(20_000)
      .describe('A client must send its headers within this …'),
    HTTP_REQUEST_TIMEOUT_MS: z.coerce
      .number()
      .int()
      .min(100)
      .default(30_000)
      .describe('… and its whole request within this; else 408 and the connection closes.'),
    ...metricsEnv,
  })
  .superRefine(requiredUnlessEmbedded(['MYSQL_URL', 'REDIS_URL', 'ADMIN_TOKEN']));

export interface GatewayConfig {
  port: number;
  host: string;
  adminPort: number;
  adminHost: string;
  /** Unset only in embedded mode, where one is generated under DATA_DIR. */
  adminToken: string | undefined;
  /** Unset = embedded store (JSONL journal under DATA_DIR/gateway). */
  mysqlUrl: string | undefined;
  /** Unset = per-replica in-memory rate limiting. */
  redisUrl: string | undefined;
  ticketsAddr: string;
  knowledgeAddr: string;
  answersAddr: string;
  digestAddr: string;
  embedded: boolean;
  dataDir: string;
  /**
   * PUBLIC_BASE_URL without a trailing slash; unset = each request's own address (Host, or the
   * X-Forwarded-* headers of a trusted proxy), see entry-points/http/base-url.ts.
   */
  publicBaseUrl?: string | undefined;
  /** RFC 9728 `authorization_servers` of the protected-resource metadata; default none. */
  authorizationServers?: string[];
  trustProxy: boolean | number | string;
  /** Browser origins allowed to call /api/mcp; requests with any other Origin header get 403. */
  mcpAllowedOrigins: string[];
  authFailuresPerMinPerIp: number;
  keyCacheTtlMs: number;
  grpcDeadlineMs: number;
  /** Deadline of the slow admin calls: each KB import batch, digest builds. */
  grpcBulkDeadlineMs: number;
  /** Time between failing readiness and closing the listener, for load balancers to notice. */
  shutdownDelayMs: number;
  /** How long in-flight requests may take to finish before connections are cut. */
  shutdownGraceMs: number;
  /** A client must send its headers within this (default 20 s) … */
  httpHeadersTimeoutMs?: number;
  /** … and its whole request within this (default 30 s); else 408 and the connection closes. */
  httpRequestTimeoutMs?: number;
  logLevel: string;
  /** Prometheus GET /metrics (served by main); 0 = off. Unset in hand-built configs = off. */
  metricsPort?: number;
  /** Default 127.0.0.1 (METRICS_HOST). */
  metricsHost?: string | undefined;
}

/** Reads and validates the gateway's environment; throws ConfigError with every problem. */
export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const e = loadConfig(configSchema, env, { service: 'gateway' });
  const publicBaseUrl = e.PUBLIC_BASE_URL?.replace(/\/+$/, '');
  return {
    port: e.PORT,
    host: e.HOST,
    adminPort: e.ADMIN_PORT,
    adminHost: e.ADMIN_HOST,
    adminToken: e.ADMIN_TOKEN,
    mysqlUrl: e.MYSQL_URL,
    redisUrl: e.REDIS_URL,
    ticketsAddr: e.TICKETS_ADDR.address,
    knowledgeAddr: e.KNOWLEDGE_ADDR.address,
    answersAddr: e.ANSWERS_ADDR.address,
    digestAddr: e.DIGEST_ADDR.address,
    embedded: e.EMBEDDED,
    dataDir: e.DATA_DIR,
    publicBaseUrl,
    authorizationServers: e.AUTHORIZATION_SERVERS,
    trustProxy: e.TRUST_PROXY,
    mcpAllowedOrigins: e.MCP_ALLOWED_ORIGINS,
    authFailuresPerMinPerIp: e.AUTH_FAILURES_PER_MIN_PER_IP,
    keyCacheTtlMs: e.KEY_CACHE_TTL_MS,
    grpcDeadlineMs: e.GRPC_DEADLINE_MS,
    grpcBulkDeadlineMs: e.GRPC_BULK_DEADLINE_MS,
    shutdownDelayMs: e.SHUTDOWN_DELAY_MS,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    httpHeadersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
    httpRequestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
    logLevel: e.LOG_LEVEL,
    metricsPort: e.METRICS_PORT,
    metricsHost: e.METRICS_HOST,
  };
}

/** The same rules as the schema, for callers that build a GatewayConfig by hand (tests). */
export function assertRunnable(config: GatewayConfig): void {
  if (config.embedded) return;
  const missing = [
    config.mysqlUrl === undefined && 'MYSQL_URL',
    config.redisUrl === undefined && 'REDIS_URL',
    config.adminToken === undefined && 'ADMIN_TOKEN',
  ].filter(Boolean);
  if (missing.length > 0) {
    throw new ConfigError(
      `${missing.join(', ')} required: the embedded fallback only applies under \`npm start\` (EMBEDDED=true)`,
    );
  }
}
