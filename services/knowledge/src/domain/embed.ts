import { codePointLength, invalidRequest } from '@support-agent/shared';
import { fingerprintKey } from './fingerprint.js';
import type { EmbeddingProvider } from './ports.js';
import { LIMITS, validateBatchSize } from './validation.js';

export interface EmbedOutcome {
  vectors: Float32Array[];
  /** `provider/model/dimensions`: vectors with different fingerprints are not comparable. */
  fingerprint: string;
}

/**
 * Embeds plain texts with the provider the KB index uses, so other services
 * (digest topic clustering) compare texts exactly as search does.
 */
export async function embedTexts(
  deps: { embeddings: EmbeddingProvider },
  texts: string[],
): Promise<EmbedOutcome> {
  if (texts.length === 0) throw invalidRequest('texts is required', 'texts');
  validateBatchSize(texts.length, 'texts');
  for (const t of texts) {
    if (codePointLength(t) > LIMITS.embedTextMax) {
      throw invalidRequest(`texts must be at most ${LIMITS.embedTextMax} characters each`, 'texts');
    }
  }
  const vectors = await deps.embeddings.embedTexts(texts);
  return { vectors, fingerprint: fingerprintKey(deps.embeddings.fingerprint) };
}
