// Seeded randomness and the small template language of the example generator.
import { mulberry32 } from '@support-agent/shared';

/** Slot values: a list to pick from, or a function that makes one. */
export type Slot = readonly string[] | ((r: Rand) => string);
export type Slots = Record<string, Slot>;

/** Random choices over one seeded stream. */
export class Rand {
  private readonly next: () => number;

  constructor(seed: number) {
    this.next = mulberry32(seed);
  }

  float(): number {
    return this.next();
  }

  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** Up to n distinct items, in random order. */
  sample<T>(items: readonly T[], n: number): T[] {
    const copy = [...items];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [copy[i], copy[j]] = [copy[j]!, copy[i]!];
    }
    return copy.slice(0, n);
  }

  /** A key of `weights` drawn in proportion to its weight. */
  weighted<K extends string>(weights: Record<K, number>): K {
    const entries = Object.entries(weights) as Array<[K, number]>;
    let x = this.next() * entries.reduce((s, [, w]) => s + w, 0);
    for (const [k, w] of entries) {
      x -= w;
      if (x < 0) return k;
    }
    return entries[entries.length - 1]![0];
  }
}

const ALTERNATIVES = /\[([^[\]]*\|[^[\]]*)\]/g;
const HAS_ALTERNATIVES = /\[[^[\]]*\|[^[\]]*\]/;
const SLOT = /\{([a-z_0-9]+)\}/g;

/**
 * Expands a template: `[a|b|c]` picks one alternative (an empty one is allowed:
 * `[|very ]`; groups nest), then `{slot}` is replaced by a value of that slot.
 * Brackets without a `|` (checkboxes) are left alone; `\[` and `\]` are literal
 * brackets inside a group. Slot values are not expanded again, so code and logs
 * inside them stay verbatim.
 */
export function fill(r: Rand, template: string, slots: Slots): string {
  let text = template.replace(/\\\[/g, '\u0001').replace(/\\\]/g, '\u0002');
  // Innermost groups first, so alternatives may nest.
  while (HAS_ALTERNATIVES.test(text)) {
    text = text.replace(ALTERNATIVES, (_, body: string) => r.pick(body.split('|')));
  }
  text = text.replace(/\u0001/g, '[').replace(/\u0002/g, ']');
  return text.replace(SLOT, (_, name: string) => {
    const slot = slots[name];
    if (!slot) throw new Error(`template slot {${name}} has no values: ${template}`);
    return typeof slot === 'function' ? slot(r) : r.pick(slot);
  });
}

/** One template, picked at random and filled. */
export function fillOne(r: Rand, templates: readonly string[], slots: Slots): string {
  return fill(r, r.pick(templates), slots);
}

/** Upper-cases the first letter (templates that start with a slot). */
export function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
