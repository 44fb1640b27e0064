import OpenAI from 'openai';
import { AppError, chunks, mapConcurrently, type Logger } from '@support-agent/shared';
import type { EmbeddingProvider, EntryText, Fingerprint } from '../domain/ports.js';
import { normalize } from './hashed-embeddings.js';

/** Output sizes of OpenAI's embedding models when `dimensions` is not requested. */
const KNOWN_DIMENSIONS: Record<string, number> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
};

/** About 2k tokens of English: well inside every embedding model's input limit. */
const MAX_INPUT_CHARS = 8_000;

export interface OpenAIEmbeddingsOptions {
  apiKey?: string | undefined;
  baseURL?: string | undefined;
  model: string;
  /** Requested output size (text-embedding-3 and compatible servers); unset = the model's own. */
  dimensions?: number | undefined;
  /** Per-request timeout in milliseconds. */
  timeoutMs: number;
  /** Retries on 408/409/429/5xx and connection errors, with exponential backoff (honours Retry-After). */
  maxRetries: number;
  /** Inputs per request. */
  batchSize: number;
  /** Requests in flight at once for a large batch. */
  concurrency?: number;
  logger?: Logger;
}

/**
 * Embeddings from any OpenAI-compatible `/embeddings` endpoint via the `openai`
 * client: batched requests, timeouts, and the client's retries with backoff.
 * Every failure to reach the provider becomes service_unavailable.
 */
export class OpenAIEmbeddings implements EmbeddingProvider {
  readonly fingerprint: Fingerprint;
  /** text-embedding-3 puts unrelated texts around 0.1 and a close paraphrase around 0.9. */
  readonly cosineRange = { unrelated: 0.1, identical: 0.9 };
  private readonly client: OpenAI;

  private constructor(
    private readonly options: OpenAIEmbeddingsOptions,
    dimensions: number,
    client: OpenAI,
  ) {
    this.client = client;
    this.fingerprint = { provider: 'openai', model: options.model, dimensions };
  }

  /** Creates the provider; asks the server once for the vector size when it cannot be known. */
  static async create(options: OpenAIEmbeddingsOptions): Promise<OpenAIEmbeddings> {
    const client = new OpenAI({
      // Local OpenAI-compatible servers often need no key; the client insists on one.
      apiKey: options.apiKey ?? 'not-needed',
      ...(options.baseURL ? { baseURL: options.baseURL } : {}),
      timeout: options.timeoutMs,
      maxRetries: options.maxRetries,
    });
    let dimensions = options.dimensions ?? KNOWN_DIMENSIONS[options.model];
    if (dimensions === undefined) {
      const probe = new OpenAIEmbeddings(options, 0, client);
      const [vector] = await probe.request(['dimension probe']);
      dimensions = vector!.length;
      options.logger?.info(
        { model: options.model, dimensions },
        'embedding size learned from the provider',
      );
    }
    return new OpenAIEmbeddings(options, dimensions, client);
  }

  async embedDocuments(entries: EntryText[]): Promise<Float32Array[]> {
    return this.embedTexts(entries.map(documentText));
  }

  async embedQuery(text: string): Promise<Float32Array> {
    const [vector] = await this.embedTexts([text]);
    return vector!;
  }

  /** Embeds texts in batches (several in flight), preserving order. */
  async embedTexts(texts: string[]): Promise<Float32Array[]> {
    const batches = chunks(texts, this.options.batchSize);
    const results = await mapConcurrently(batches, this.options.concurrency ?? 4, (batch) =>
      this.request(batch),
    );
    return results.flat();
  }

  private async request(inputs: string[]): Promise<Float32Array[]> {
    let response: OpenAI.Embeddings.CreateEmbeddingResponse;
    try {
      response = await this.client.embeddings.create({
        model: this.options.model,
        input: inputs.map((t) => (t.length > MAX_INPUT_CHARS ? t.slice(0, MAX_INPUT_CHARS) : t)),
        // Floats rather than the client's default base64: every compatible server supports them.
        encoding_format: 'float',
        ...(this.options.dimensions !== undefined ? { dimensions: this.options.dimensions } : {}),
      });
    } catch (err) {
      this.options.logger?.warn(
        { err: describe(err), model: this.options.model },
        'embedding request failed',
      );
      throw new AppError('service_unavailable', 'the embedding provider is unavailable', {
        retryAfter: 5,
        cause: err,
      });
    }
    const data = [...response.data].sort((a, b) => a.index - b.index);
    if (data.length !== inputs.length) {
      throw new AppError(
        'internal_error',
        `embedding provider returned ${data.length} vectors for ${inputs.length} inputs`,
      );
    }
    const expected = this.fingerprint.dimensions;
    return data.map((d) => {
      if (!Array.isArray(d.embedding))
        throw new AppError('internal_error', 'embedding provider returned a non-float vector');
      if (expected > 0 && d.embedding.length !== expected) {
        throw new AppError(
          'internal_error',
          `embedding provider returned ${d.embedding.length} dimensions, expected ${expected} (check EMBEDDINGS_DIMENSIONS)`,
        );
      }
      return normalize(Float32Array.from(d.embedding));
    });
  }
}

/** The text embedded for an entry: question, tags and answer. */
export function documentText(entry: EntryText): string {
  const tags = entry.tags.length > 0 ? `\nTags: ${entry.tags.join(', ')}` : '';
  return `${entry.question}${tags}\n\n${entry.answer}`;
}

function describe(err: unknown): { name?: string; message: string; status?: number } {
  if (err instanceof OpenAI.APIError)
    return { name: err.name, message: err.message, ...(err.status ? { status: err.status } : {}) };
  if (err instanceof Error) return { name: err.name, message: err.message };
  return { message: String(err) };
}
