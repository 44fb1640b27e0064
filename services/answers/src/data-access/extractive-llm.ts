import { classify, type TriageModel } from '../domain/classifier.js';
import { ANSWERS_FULLY_SCORE } from '../domain/confidence.js';
import type { AnswerDraft, Budget, KbHit, LanguageModel, TicketLabels } from '../domain/ports.js';
import { priorityFor } from '../domain/priority-rules.js';
import { summarize } from '../domain/summary.js';
import { jaccard, sentences, termSet } from '../domain/text.js';

/** Answers up to this long are given whole: trimming them loses more than it saves. */
const KEEP_WHOLE_CHARS = 600;
const KEEP_WHOLE_SENTENCES = 3;
/** Sentences kept from a long answer. */
const MAX_SENTENCES = 4;
/** A second entry joins the answer when it scores this well and this close to the first. */
const SECOND_ENTRY_MIN_SCORE = 0.6;
const SECOND_ENTRY_MAX_GAP = 0.1;

/**
 * The built-in, deterministic provider (no model, no network): answers are the
 * best entries' own answers trimmed to the question, labels come from the
 * shipped classifier and the priority rules, summaries are extractive.
 */
export class ExtractiveModel implements LanguageModel {
  readonly name = 'builtin';

  constructor(private readonly triageModel: TriageModel) {}

  async writeAnswer(question: string, entries: KbHit[], _budget?: Budget): Promise<AnswerDraft> {
    const [top, second] = entries;
    if (!top) return { answer: '', answeredFully: false, citedEntryIds: [], support: null };
    const q = termSet(question);
    const parts = [trimToQuestion(top.answer, q)];
    const cited = [top.entryId];
    if (
      second &&
      second.score >= SECOND_ENTRY_MIN_SCORE &&
      top.score - second.score <= SECOND_ENTRY_MAX_GAP &&
      jaccard(termSet(top.answer), termSet(second.answer)) < 0.5 &&
      addsCoverage(q, top, second)
    ) {
      parts.push(trimToQuestion(second.answer, q));
      cited.push(second.entryId);
    }
    return {
      answer: parts.join('\n\n'),
      answeredFully: top.score >= ANSWERS_FULLY_SCORE,
      citedEntryIds: cited,
      support: null,
    };
  }

  async labelTicket(content: string, _budget?: Budget): Promise<TicketLabels> {
    const { category, probabilities } = classify(this.triageModel, content);
    return {
      category,
      priority: priorityFor(content, category),
      summary: summarize(content),
      probabilities,
    };
  }
}

/**
 * Keeps a long answer's sentences that share the most terms with the question
 * (at most MAX_SENTENCES, in their original order); short answers stay whole.
 */
export function trimToQuestion(answer: string, questionTerms: Set<string>): string {
  const text = answer.trim();
  const parts = sentences(text);
  if (text.length <= KEEP_WHOLE_CHARS || parts.length <= KEEP_WHOLE_SENTENCES) return text;
  const scored = parts.map((s, i) => {
    const terms = termSet(s);
    let overlap = 0;
    for (const t of terms) if (questionTerms.has(t)) overlap++;
    return { s, i, overlap };
  });
  if (scored.every((x) => x.overlap === 0)) return parts.slice(0, MAX_SENTENCES).join(' ');
  const chosen = [...scored]
    .sort((a, b) => b.overlap - a.overlap || a.i - b.i)
    .slice(0, MAX_SENTENCES)
    .filter((x) => x.overlap > 0)
    .sort((a, b) => a.i - b.i);
  return chosen.map((x) => x.s).join(' ');
}

/** True when the second entry covers question terms the first does not. */
function addsCoverage(q: Set<string>, first: KbHit, second: KbHit): boolean {
  const a = termSet(`${first.question} ${first.answer}`);
  const b = termSet(`${second.question} ${second.answer}`);
  for (const t of q) if (b.has(t) && !a.has(t)) return true;
  return false;
}
