// Generates labelled training tickets from the hand-written fragments: reproducible from
// a seed, shipped in the repository, never derived from evaluation data.
import type { Category } from '../../src/domain/ports.js';
import { DRAFTS } from './drafts.js';
import { readDomains } from './fragments.js';
import { render, type Style } from './render.js';
import { Rand } from './rng.js';
import { slotsFor } from './slots.js';

export interface GeneratedExample {
  text: string;
  label: Category;
  /** The product vocabulary it was written with, for cross-validation grouped by domain. */
  domain: string;
  style: Style;
}

/** How often each kind of ticket is generated (training balances the classes anyway). */
const LABEL_WEIGHTS: Record<Category, number> = {
  bug: 0.3,
  feature_request: 0.27,
  how_to: 0.2,
  general_question: 0.13,
  documentation: 0.1,
};

/** `count` generated tickets; the same seed gives the same tickets. */
export function generateExamples(count: number, seed: number): GeneratedExample[] {
  const r = new Rand(seed);
  const domains = readDomains();
  const out: GeneratedExample[] = [];
  for (let i = 0; i < count; i++) {
    const label = r.weighted(LABEL_WEIGHTS);
    const domain = r.pick(domains);
    const slots = slotsFor(r, domain);
    const draft = DRAFTS[label](r, domain, slots);
    const { text, style } = render(r, draft, slots);
    out.push({ text, label, domain: domain.name, style });
  }
  return out;
}
