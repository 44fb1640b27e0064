import {
  boolFlag,
  ConfigError,
  hostPort,
  loadConfig,
  logLevel,
  metricsEnv,
  v8FlagsEnv,
  z,
} from '@support-agent/shared';

const url = (protocols: string[]) =>
  z.string().refine(
    (v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    `expected a ${protocols.join(' or ')}// URL`,
  );

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** V8 heap flags applied at start-up unless V8_FLAGS says otherwise. */
export const DEFAULT_V8_FLAGS = '--heap-growing-percent=25';

/** Environment of the knowledge service; every variable is documented in README.md. */
const schema = z
  .object({
    KNOWLEDGE_ADDR: hostPort.prefault('127.0.0.1:50052'),
    QDRANT_URL: url(['http:', 'https:']).optional(),
    QDRANT_API_KEY: z.string().optional(),
    QDRANT_COLLECTION_PREFIX: z
      .string()
      .regex(
        /^[A-Za-z0-9-]{1,40}$/,
        'letters, digits and "-" only (it is part of collection names)',
      )
      .default('kb'),
    QDRANT_TIMEOUT_MS: int(100, 600_000).default(5_000),
    OPENAI_API_KEY: z.string().optional(),
    OPENAI_BASE_URL: url(['http:', 'https:']).optional(),
    EMBEDDINGS_MODEL: z.string().min(1).default('text-embedding-3-small'),
    EMBEDDINGS_DIMENSIONS: int(16, 65_536).optional(),
    EMBEDDINGS_TIMEOUT_MS: int(100, 600_000).default(10_000),
    EMBEDDINGS_MAX_RETRIES: int(0, 10).default(3),
    EMBEDDINGS_BATCH_SIZE: int(1, 2048).default(64),
    EMBEDDED: boolFlag.default(false),
    DATA_DIR: z.string().default('./data'),
    SHUTDOWN_GRACE_MS: int(0, 600_000).default(10_000),
    // The embedded index is most of this process's heap: a lower heap growing factor than
    // V8's default keeps RSS near live data, at a small GC cost (docs/performance.md).
    V8_FLAGS: v8FlagsEnv(DEFAULT_V8_FLAGS),
    LOG_LEVEL: logLevel,
    ...metricsEnv,
  })
  .superRefine((env, ctx) => {
    if (!env.EMBEDDED && env.QDRANT_URL === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['QDRANT_URL'],
        message: 'is required (the embedded index only applies under `npm start`, EMBEDDED=true)',
      });
    }
  });

export interface KnowledgeConfig {
  host: string;
  /** 0 = any free port (tests). */
  port: number;
  /** Unset = embedded index under DATA_DIR/knowledge (only with EMBEDDED=true). */
  qdrantUrl: string | undefined;
  qdrantApiKey: string | undefined;
  collectionPrefix: string;
  qdrantTimeoutMs: number;
  /** OpenAI-compatible embeddings when either is set; otherwise the built-in hashed embeddings. */
  openaiApiKey: string | undefined;
  openaiBaseUrl: string | undefined;
  embeddingsModel: string;
  /** Requested embedding size (OpenAI), or the hashed embeddings' size (default 512). */
  embeddingsDimensions: number | undefined;
  embeddingsTimeoutMs: number;
  embeddingsMaxRetries: number;
  embeddingsBatchSize: number;
  embedded: boolean;
  dataDir: string;
  shutdownGraceMs: number;
  /** V8 heap flags for this process (applied by main). */
  v8Flags: string;
  logLevel: string;
  /** Prometheus GET /metrics (served by main); 0 = off. Unset in hand-built configs = off. */
  metricsPort?: number;
  /** Default 127.0.0.1 (METRICS_HOST). */
  metricsHost?: string | undefined;
}

/** Reads and validates the environment; throws ConfigError listing every problem. */
export function loadKnowledgeConfig(env: NodeJS.ProcessEnv = process.env): KnowledgeConfig {
  const e = loadConfig(schema, env, { service: 'knowledge' });
  return {
    host: e.KNOWLEDGE_ADDR.host,
    port: e.KNOWLEDGE_ADDR.port,
    qdrantUrl: e.QDRANT_URL,
    qdrantApiKey: e.QDRANT_API_KEY,
    collectionPrefix: e.QDRANT_COLLECTION_PREFIX,
    qdrantTimeoutMs: e.QDRANT_TIMEOUT_MS,
    openaiApiKey: e.OPENAI_API_KEY,
    openaiBaseUrl: e.OPENAI_BASE_URL,
    embeddingsModel: e.EMBEDDINGS_MODEL,
    embeddingsDimensions: e.EMBEDDINGS_DIMENSIONS,
    embeddingsTimeoutMs: e.EMBEDDINGS_TIMEOUT_MS,
    embeddingsMaxRetries: e.EMBEDDINGS_MAX_RETRIES,
    embeddingsBatchSize: e.EMBEDDINGS_BATCH_SIZE,
    embedded: e.EMBEDDED,
    dataDir: e.DATA_DIR,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    v8Flags: e.V8_FLAGS,
    logLevel: e.LOG_LEVEL,
    metricsPort: e.METRICS_PORT,
    metricsHost: e.METRICS_HOST,
  };
}

/** The same rule as the schema, for configs built by hand (tests, tools). */
export function assertRunnable(config: KnowledgeConfig): void {
  if (!config.embedded && config.qdrantUrl === undefined) {
    throw new ConfigError(
      'QDRANT_URL is required: the embedded index only applies under `npm start` (EMBEDDED=true)',
    );
  }
}

/** Whether embeddings come from an OpenAI-compatible server rather than the built-in provider. */
export function usesOpenAI(config: KnowledgeConfig): boolean {
  return config.openaiApiKey !== undefined || config.openaiBaseUrl !== undefined;
}
