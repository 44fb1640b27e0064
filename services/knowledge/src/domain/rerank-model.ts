import raw from './rerank-model.json' with { type: 'json' };
import { checkRerankModel, type RerankModel } from './rerank.js';

/** The shipped reranking and calibration model (fitted by scripts/fit-confidence.ts). */
export const RERANK_MODEL: RerankModel = checkRerankModel(raw as unknown);
