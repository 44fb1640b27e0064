import raw from './triage-model.json' with { type: 'json' };
import vectorFile from './triage-word-vectors.json' with { type: 'json' };
import { checkModel, type TriageModel } from './classifier.js';
import { decodeWordVectors, type WordVectors } from './word-vectors.js';

/** The shipped word-vector table (see word-vectors.ts). */
export function loadWordVectors(): WordVectors {
  return decodeWordVectors(vectorFile as unknown);
}

/** The shipped built-in classifier (trained by training/train.ts), with the word vectors it reads. */
export function loadTriageModel(): TriageModel {
  const model = checkModel(raw as unknown);
  const wanted = model.features.vectors;
  if (wanted) {
    const vectors = loadWordVectors();
    if (vectors.index.size !== wanted.words)
      throw new Error(
        `triage model: trained with ${wanted.words} word vectors, the table has ${vectors.index.size}`,
      );
    model.wordVectors = vectors;
  }
  return model;
}
