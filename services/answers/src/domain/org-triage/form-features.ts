// What an organization's own model reads in a ticket beyond the built-in model's features: the
// ticket's form. Issue and ticket templates leave traces the prose features drop with the code:
// the words of HTML comments (a template's hidden instructions often name it, such as
// "feature_request_template"), the language tags of code fences, the boxes ticked in a
// checklist, and whether the text pastes logs, images or links. Each is a feature named `m:…`;
// the words are uni/bigrams, L2-normalised as one family like the other word features.
import { MAX_CLASSIFIED_CHARS, tokens } from '../triage-features.js';

const COMMENT = /<!--([\s\S]*?)(?:-->|$)/g;
const FENCE = /^\s*(```+|~~~+)\s*([\w+#.-]*)/gm;
const CHECKED = /^\s*[-*]\s*\[[xX]\]\s*(.+)$/gm;

function grams(prefix: string, toks: string[], into: Set<string>): void {
  for (let i = 0; i < toks.length; i++) {
    into.add(`${prefix}${toks[i]}`);
    if (i + 1 < toks.length) into.add(`${prefix}${toks[i]} ${toks[i + 1]}`);
  }
}

export function formFeatures(raw: string): [string, number][] {
  const text = raw.slice(0, MAX_CLASSIFIED_CHARS);
  const words = new Set<string>();
  for (const m of text.matchAll(COMMENT)) grams('m:', tokens(m[1]!).slice(0, 200), words);
  for (const m of text.matchAll(CHECKED)) grams('m:x ', tokens(m[1]!).slice(0, 30), words);
  const out: [string, number][] = [];
  const norm = words.size > 0 ? 1 / Math.sqrt(words.size) : 0;
  for (const w of words) out.push([w, norm]);
  let fences = 0;
  const langs = new Set<string>();
  for (const m of text.matchAll(FENCE)) {
    fences++;
    if (fences % 2 === 1 && m[2]) langs.add(m[2].toLowerCase());
  }
  for (const l of langs) out.push([`m:fence ${l}`, 1]);
  const n = (re: RegExp) => text.match(re)?.length ?? 0;
  const shape: [string, number][] = [
    ['m:#fences', fences / 2 / (fences / 2 + 1)],
    ['m:#images', Math.min(1, n(/!\[[^\]]*\]\(|<img\b/gi) / 2)],
    ['m:#links', Math.min(1, n(/https?:\/\//g) / 4)],
    ['m:#length', Math.min(1, Math.log10(1 + raw.length) / 5)],
    ['m:#log lines', Math.min(1, n(/^.*\b(INFO|WARN|WARNING|ERROR|DEBUG|FATAL)\b.*$/gm) / 5)],
    ['m:#versions', Math.min(1, n(/\bv?\d+\.\d+(\.\d+)+\b/g) / 3)],
  ];
  for (const s of shape) if (s[1] > 0) out.push(s);
  return out;
}
