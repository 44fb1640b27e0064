import {
  intEnv,
  openAiEnv,
  serverUrl,
  serviceAddr,
  semiSpaceMaxEnv,
  serviceConfig,
  sharedSetting,
  v8FlagsEnv,
  z,
} from '@support-agent/shared';

/** V8 heap flags applied at start-up unless V8_FLAGS says otherwise. */
export const DEFAULT_V8_FLAGS = '--heap-growing-percent=25';

/** What knowledge cannot run without outside `npm start` (EMBEDDED=true). */
export const REQUIRED_BACKENDS = ['QDRANT_URL'] as const;

/** Environment of the knowledge service (docs/configuration.md). */
export const { schema: configSchema, load: loadKnowledgeConfig } = serviceConfig(
  'knowledge',
  {
    KNOWLEDGE_ADDR: serviceAddr(
      'knowledge',
      'host:port of the gRPC listener (port 0 picks a free one).',
    ),
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
    ...openAiEnv(
      'embeddings from an OpenAI-compatible server; unset = the built-in hashed embeddings.',
    ),
    EMBEDDINGS_MODEL: sharedSetting.model(
      'text-embedding-3-small',
      'Embeddings model on the OpenAI-compatible server.',
    ),
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
    EMBEDDINGS_MAX_RETRIES: sharedSetting.openAiRetries(3, 'one embeddings request'),
    EMBEDDINGS_BATCH_SIZE: intEnv(1, 2048, 64).describe('Texts per embeddings request.'),
    SHUTDOWN_GRACE_MS: sharedSetting.shutdownGrace('In-flight calls', 600_000),
    // The embedded index is most of this process's heap: a lower heap growing factor than
    // V8's default keeps RSS near live data, at a small GC cost (docs/performance.md).
    V8_FLAGS: v8FlagsEnv(DEFAULT_V8_FLAGS, "keeps RSS near the embedded index's live data"),
    // A bulk import makes V8 grow the young generation to its limit (2 × 16 MB, resident from
    // then on). Searches allocate ≈ 55–70 KB each and scavenges cost by what survives: with 4 MB
    // semi-spaces knowledge spent no more CPU per search at 1k entries and less at 20k, and the
    // 100k import's peak RSS fell by ≈ 24 MB (docs/performance.md).
    V8_SEMI_SPACE_MAX_MB: semiSpaceMaxEnv(4, "keeps a bulk import's young generation at 2 × 4 MB"),
  },
  REQUIRED_BACKENDS,
);

export type KnowledgeConfig = z.infer<typeof configSchema>;
