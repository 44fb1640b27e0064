// The training set of the triage classifier: the hand-written examples plus generated
// tickets, featurized, and the vocabulary a model keeps.
import { readFileSync } from 'node:fs';
import { featurize, type FeatureConfig, type FeatureVector } from '../src/domain/classifier.js';
import { CATEGORIES, type Category } from '../src/domain/ports.js';
import type { WordVectors } from '../src/domain/word-vectors.js';
import { toSparse, type SparseData } from '../src/domain/org-triage/fit-softmax.js';
import { generateExamples } from './generator/index.js';

export interface Example {
  text: string;
  label: Category;
  /** Where its words come from: a generator domain, or "hand" for the hand-written ones. */
  source: string;
}

/** Hand-written examples (training/examples.jsonl, training/issues.jsonl), `{text, label}` per line. */
export function readHandWritten(path: string): Example[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l, i) => {
      const r = JSON.parse(l) as { text?: unknown; label?: unknown };
      if (typeof r.text !== 'string' || !CATEGORIES.includes(r.label as Category))
        throw new Error(`${path}:${i + 1}: expected {"text", "label"}`);
      return { text: r.text, label: r.label as Category, source: 'hand' };
    });
}

export function generated(count: number, seed: number): Example[] {
  return generateExamples(count, seed).map((e) => ({
    text: e.text,
    label: e.label,
    source: e.domain,
  }));
}

export interface VocabularyOptions {
  /** A feature must occur in at least this many examples… */
  minDf: number;
  /**
   * …and in examples from at least this many sources. Generated tickets take their
   * product words from one domain; a feature seen in one domain only is product
   * vocabulary, which says nothing about the kind of ticket elsewhere.
   */
  minSources: number;
}

/** Features kept for training (hand-designed cues always), in a stable order. */
export function vocabulary(
  vectors: FeatureVector[],
  examples: Example[],
  o: VocabularyOptions,
): string[] {
  const df = new Map<string, number>();
  const sources = new Map<string, Set<string>>();
  vectors.forEach((v, i) => {
    for (const name of v.keys()) {
      df.set(name, (df.get(name) ?? 0) + 1);
      let s = sources.get(name);
      if (!s) sources.set(name, (s = new Set()));
      s.add(examples[i]!.source);
    }
  });
  return [...df]
    .filter(
      ([name, n]) =>
        name.startsWith('h:') || (n >= o.minDf && sources.get(name)!.size >= o.minSources),
    )
    .map(([name]) => name)
    .sort();
}

export function featurizeAll(
  examples: Example[],
  config: FeatureConfig,
  vectors?: WordVectors,
): FeatureVector[] {
  return examples.map((e) => featurize(e.text, config, vectors));
}

/** Sparse rows over `features`; features outside it are dropped. */
export function toData(
  vectors: FeatureVector[],
  labels: Category[],
  features: string[],
  rowWeight?: number[],
): SparseData {
  const index = new Map(features.map((f, i) => [f, i]));
  const rows = vectors.map((v) => {
    const row = new Map<number, number>();
    for (const [name, value] of v) {
      const i = index.get(name);
      if (i !== undefined) row.set(i, value);
    }
    return row;
  });
  return toSparse(
    rows,
    labels.map((l) => CATEGORIES.indexOf(l)),
    rowWeight,
  );
}
