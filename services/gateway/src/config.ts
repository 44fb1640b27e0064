import {
  backendUrl,
  intEnv,
  port,
  serverUrl,
  serviceTarget,
  serviceConfig,
  sharedSetting,
  v8FlagsEnv,
  z,
} from '@support-agent/shared';

/**
 * V8 heap flags applied at start-up unless V8_FLAGS says otherwise. The gateway's live heap is
 * ≈ 30 MB, but under load V8's default growing factor let the old space fill with promoted
 * request garbage up to ≈ 4× that before a full collection; a factor of 2 keeps the peak RSS
 * 60–70 MB lower for 3–14 % more CPU per request. Scavenges run on the main thread alone: on
 * cores shared with the other processes a scavenge's helper threads wait for a core while the
 * requests wait for the scavenge; alone, the gateway's longest pauses at moderate load were
 * half as long (docs/performance.md).
 */
export const DEFAULT_V8_FLAGS = '--heap-growing-percent=100 --no-parallel-scavenge';

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

/** A whole number of at least `min` (no upper bound). */
const atLeast = (min: number, fallback: number) => intEnv(min, Number.MAX_SAFE_INTEGER, fallback);

/** What the gateway cannot run without outside `npm start` (EMBEDDED=true). */
export const REQUIRED_BACKENDS = ['MYSQL_URL', 'REDIS_URL', 'ADMIN_TOKEN'] as const;

/** Environment of the gateway (docs/configuration.md). */
export const { schema: configSchema, load: loadGatewayConfig } = serviceConfig(
  'gateway',
  {
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
    MYSQL_URL: backendUrl.mysql('organizations, settings and API keys.'),
    REDIS_URL: backendUrl.redis('rate limits shared by every replica; unset = in-memory.'),
    REDIS_COMMAND_TIMEOUT_MS: sharedSetting.redisCommandTimeout(),
    TICKETS_ADDR: serviceTarget(
      'tickets',
      'The tickets service: host:port (a DNS name stands for every replica it resolves to), dns:///name:port, or replicas as ip:port,ip:port.',
    ),
    KNOWLEDGE_ADDR: serviceTarget(
      'knowledge',
      'The knowledge service; replicas as for TICKETS_ADDR.',
    ),
    ANSWERS_ADDR: serviceTarget('answers', 'The answers service; replicas as for TICKETS_ADDR.'),
    DIGEST_ADDR: serviceTarget('digest', 'The digest service; replicas as for TICKETS_ADDR.'),
    PUBLIC_BASE_URL: serverUrl(['http:', 'https:'])
      .transform((url) => url.replace(/\/+$/, ''))
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
    AUTH_FAILURES_PER_MIN_PER_IP: atLeast(1, 20).describe(
      'Failed authentications allowed per client IP and minute (API keys; admin tokens on counters of their own).',
    ),
    // The contract promises revocation and settings changes on every replica within 1 s.
    KEY_CACHE_TTL_MS: intEnv(0, 1000, 500).describe(
      'How long a key lookup is cached (at most 1 s: revocation applies within it).',
    ),
    GRPC_DEADLINE_MS: atLeast(1, 5000).describe('Deadline of each call to an upstream service.'),
    KNOWLEDGE_SEARCH_BATCH: intEnv(1, 64, 32).describe(
      'Most KB searches in one knowledge.SearchBatch call: searches that reach the gateway in the same turn of its event loop leave in one call; 1 sends each as its own Search (docs/performance.md).',
    ),
    CREATE_TICKET_BATCH: intEnv(1, 64, 32).describe(
      'Most ticket creates in one tickets.CreateTicketBatch call: creates that reach the gateway in the same turn of its event loop leave in one call; 1 sends each as its own CreateTicket (docs/performance.md).',
    ),
    GRPC_BULK_DEADLINE_MS: atLeast(1, 60_000).describe(
      'Deadline of the slow admin calls: each KB import batch, digest builds.',
    ),
    SHUTDOWN_DELAY_MS: atLeast(0, 0).describe(
      'Time between failing readiness and closing the listener, for load balancers.',
    ),
    SHUTDOWN_GRACE_MS: atLeast(0, 10_000).describe(
      'How long in-flight requests may take to finish before connections are cut.',
    ),
    // Slow clients (slowloris): the whole header block, and the whole request, within these.
    HTTP_HEADERS_TIMEOUT_MS: atLeast(100, 20_000).describe(
      'A client must send its headers within this …',
    ),
    HTTP_REQUEST_TIMEOUT_MS: atLeast(100, 30_000).describe(
      '… and its whole request within this; else 408 and the connection closes.',
    ),
    V8_FLAGS: v8FlagsEnv(
      DEFAULT_V8_FLAGS,
      "keeps the old space near twice the gateway's live data; scavenges on the main thread alone",
    ),
  },
  REQUIRED_BACKENDS,
);

export type GatewayConfig = z.infer<typeof configSchema>;
