import {
  commonEnv,
  ConfigError,
  hostPort,
  intEnv,
  loadConfig,
  metricsEnv,
  requiredUnlessEmbedded,
  serverUrl,
  v8FlagsEnv,
  z,
} from '@support-agent/shared';

/** V8 heap flags applied at start-up unless V8_FLAGS says otherwise. */
export const DEFAULT_V8_FLAGS = '--heap-growing-percent=25';

/** Environment of the knowledge service (docs/configuration.md). */
export const configSchema = z
  .object({
    KNOWLEDGE_ADDR: hostPort
      .prefault('127.0.0.1:50052')
      .describe('host:port of the gRPC listener (port 0 picks a free one).'),
    QDRANT_URL: serverUrl(['http:', 'https:'])
      .optional()
      .describe('Qdrant REST URL; unset = the embedded index under DATA_DIR/knowledge.'),
    QDRANT_API_KEY: z.string().optional().describe('Qdrant API key, when the server asks for one.'),
    QDRANT_COLLECTION_PREFIX: z
      .string()
      .regex(
        /^[A-Za-z0-9-]{1,40}$/,
        'letters, digits and "-" only (it is part of collection names)',
      )
      .default('kb')
      .describe('Prefix of the Qdrant collection names.'),
    QDRANT_TIMEOUT_MS: intEnv(100, 600_000, 5_000).describe('Timeout of each Qdrant request.'),
    OPENAI_API_KEY: z
      .string()
      .optional()
      .describe(
        'With OPENAI_BASE_URL or alone: embeddings from an OpenAI-compatible server; unset = the built-in hashed embeddings.',
      ),
    OPENAI_BASE_URL: serverUrl(['http:', 'https:'])
      .optional()
      .describe(
        'Any OpenAI-compatible server (https://api.openai.com/v1 when only the key is set).',
      ),
    EMBEDDINGS_MODEL: z
      .string()
      .min(1)
      .default('text-embedding-3-small')
      .describe('Embeddings model on the OpenAI-compatible server.'),
    EMBEDDINGS_DIMENSIONS: z.coerce
      .number()
      .int()
      .min(16)
      .max(65_536)
      .optional()
      .describe("Requested embedding size (OpenAI), or the hashed embeddings' size (default 512)."),
    EMBEDDINGS_TIMEOUT_MS: intEnv(100, 600_000, 10_000).describe(
      'Timeout of one embeddings request.',
    ),
    EMBEDDINGS_MAX_RETRIES: intEnv(0, 10, 3).describe(
      'Retries of one embeddings request after 429, 5xx and timeouts.',
    ),
    EMBEDDINGS_BATCH_SIZE: intEnv(1, 2048, 64).describe('Texts per embeddings request.'),
    ...commonEnv,
    SHUTDOWN_GRACE_MS: intEnv(0, 600_000, 10_000).describe(
      'In-flight calls get this long to finish at shutdown.',
    ),
    // The embedded index is most of this process's heap: a lower heap growing factor than
    // V8's default keeps RSS near live data, at a small GC cost (docs/performance.md).
    V8_FLAGS: v8FlagsEnv(DEFAULT_V8_FLAGS).describe(
      "V8 heap flags applied at start-up (keeps RSS near the embedded index's live data).",
    ),
    ...metricsEnv,
  })
  .superRefine(requiredUnlessEmbedded(['QDRANT_URL']));

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
  const e = loadConfig(configSchema, env, { service: 'knowledge' });
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
