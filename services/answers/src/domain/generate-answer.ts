import { randomUUID } from 'node:crypto';
import { AppError, invalidRequest, type Logger } from '@support-agent/shared';
import { answerConfidence, RELEVANCE_FLOOR } from './confidence.js';
import { secondsUntilNextMonth } from './month.js';
import type { LedgerFallback } from './ledger-fallback.js';
import type {
  AnswerDraft,
  DeflectionLedger,
  KbHit,
  KnowledgeSearch,
  LanguageModel,
  OrgPolicy,
  PolicyStore,
} from './ports.js';
import { DEFAULT_POLICY } from './ports.js';
import { codePointLength, termSet } from './text.js';

export const QUESTION_MAX = 2000;
/** Hits asked from knowledge for every question. */
export const SEARCH_LIMIT = 5;
/** What the answer says when the knowledge base has nothing relevant. */
export const NOT_FOUND_ANSWER =
  "I couldn't find this in the knowledge base, so I can't give you a reliable answer. " +
  'Please open a support ticket and a member of the team will help you.';
/** Time kept back from the caller's deadline for the built-in fallback and the ledger. */
const FALLBACK_RESERVE_MS = 400;
/** An LLM call with less time than this is not worth starting. */
const MIN_LLM_MS = 250;

export interface AnswerDeps {
  ledger: DeflectionLedger;
  policies: PolicyStore;
  knowledge: KnowledgeSearch;
  /** The built-in extractive provider: always there, deterministic. */
  builtin: LanguageModel;
  /** The configured LLM, if any. */
  llm: LanguageModel | undefined;
  logger: Logger;
  now: () => Date;
  reservationTtlMs: number;
  llmTimeoutMs: number;
  /** Answers without the ledger when it is silent or down (inputs with `mayAnswerWithoutLedger`). */
  ledgerFallback?: LedgerFallback;
}

export interface GenerateAnswerInput {
  orgId: string;
  question: string;
  policy: OrgPolicy;
  /** Key of the deflection reservation: random per API call, the event id for triage. */
  requestId: string;
  /** Epoch ms by which the caller needs the result (its gRPC deadline), if any. */
  deadline?: number | undefined;
  /** Aborted when the caller gave up (cancelled, deadline passed): the slot is then released, never committed. */
  signal?: AbortSignal | undefined;
  /** The KB hits of `question` when the caller searched already (triage, before reserving). */
  hits?: KbHit[] | undefined;
  /**
   * An API answer: when the ledger does not answer in time (deps.ledgerFallback), it is written
   * without a slot, never high-confidence. Triage waits for the ledger (its event is redelivered).
   */
  mayAnswerWithoutLedger?: boolean;
}

export interface AnswerSource {
  entryId: string;
  question: string;
  score: number;
}

export interface GeneratedAnswer {
  answer: string;
  confidence: number;
  answeredFully: boolean;
  highConfidence: boolean;
  sources: AnswerSource[];
  /** Which provider wrote the answer: 'none' when the KB had nothing relevant. */
  provider: string;
}

/** The question as the API defines it: 1–2000 code points, white space only counts as missing. */
export function requireQuestion(question: string | undefined): string {
  if (question === undefined || question.trim() === '')
    throw invalidRequest('question is required', 'question');
  if (codePointLength(question) > QUESTION_MAX) {
    throw invalidRequest(`question must be at most ${QUESTION_MAX} characters`, 'question');
  }
  return question;
}

export function requireOrgId(orgId: string | undefined): string {
  if (!orgId || orgId.trim() === '' || orgId.length > 64)
    throw invalidRequest('org_id is required', 'org_id');
  return orgId;
}

/** Checks a policy from the wire: a limit of at least 1 and a threshold in 0–100. */
export function validatePolicy(policy: OrgPolicy): OrgPolicy {
  const { deflectionMonthlyLimit: limit, highConfidenceThreshold: threshold } = policy;
  if (!Number.isInteger(limit) || limit < 1) {
    throw invalidRequest(
      'deflection_monthly_limit must be a positive integer',
      'deflection_monthly_limit',
    );
  }
  if (!Number.isInteger(threshold) || threshold < 0 || threshold > 100) {
    throw invalidRequest(
      'high_confidence_threshold must be an integer between 0 and 100',
      'high_confidence_threshold',
    );
  }
  return policy;
}

/**
 * The policy to apply: the one passed with the call when it has a limit (proto3
 * cannot tell an absent limit from 0), else the latest one pushed for the org,
 * else the defaults.
 */
export async function resolvePolicy(
  policies: PolicyStore,
  orgId: string,
  given: OrgPolicy | undefined,
): Promise<OrgPolicy> {
  if (given && given.deflectionMonthlyLimit !== 0) return validatePolicy(given);
  return (await policies.get(orgId)) ?? DEFAULT_POLICY;
}

/**
 * Generates a grounded answer under the org's monthly deflection limit:
 * reserve a slot → search the KB → write the answer from the hits only →
 * confidence → commit the slot when high-confidence, release it otherwise.
 * At the limit nothing is generated and deflection_limit_reached is thrown.
 */
export async function generateAnswer(
  deps: AnswerDeps,
  input: GenerateAnswerInput,
): Promise<GeneratedAnswer> {
  const orgId = requireOrgId(input.orgId);
  const question = requireQuestion(input.question);
  const policy = validatePolicy(input.policy);
  const log = deps.logger.child({ orgId, requestId: input.requestId });

  const startedAt = deps.now();
  const request = {
    orgId,
    requestId: input.requestId,
    limit: policy.deflectionMonthlyLimit,
    now: startedAt,
    ttlMs: deps.reservationTtlMs,
  };
  const fallback = input.mayAnswerWithoutLedger ? deps.ledgerFallback : undefined;
  const reservation = fallback
    ? await fallback.reserve(deps.ledger, request, log, input.deadline)
    : await ledgerCall(() => deps.ledger.reserve(request));
  if (reservation.kind === 'limit_reached') throw limitReached(startedAt);
  if (reservation.kind === 'unanswered') {
    if (fallback?.atLimitIn(orgId, startedAt)) throw limitReached(startedAt);
    // No slot: an answer all the same, but one that cannot deflect (nothing to count).
    const hits = input.hits ?? (await searchKnowledge(deps, orgId, question, input.deadline));
    const result = await writeGroundedAnswer(deps, log, question, hits, policy, input.deadline);
    return { ...result, highConfidence: false };
  }
  // A redelivered triage event that was counted before is answered again but never counted twice.
  const holdsSlot = reservation.kind === 'reserved';

  let result: GeneratedAnswer;
  try {
    const hits = input.hits ?? (await searchKnowledge(deps, orgId, question, input.deadline));
    result = await writeGroundedAnswer(deps, log, question, hits, policy, input.deadline);
    // An answer nobody receives must not count.
    if (input.signal?.aborted) {
      throw new AppError('service_unavailable', 'the caller gave up before the answer was ready', {
        retryAfter: 1,
      });
    }
  } catch (err) {
    if (holdsSlot) await releaseQuietly(deps, log, input.requestId);
    throw err;
  }

  if (!holdsSlot) return result;
  if (!result.highConfidence) {
    await releaseQuietly(deps, log, input.requestId);
    return result;
  }
  let committed;
  try {
    committed = await ledgerCall(() =>
      deps.ledger.commit(input.requestId, policy.deflectionMonthlyLimit, deps.now()),
    );
  } catch (err) {
    // Never hand out a high-confidence answer that was not counted.
    await releaseQuietly(deps, log, input.requestId);
    throw err;
  }
  // Only when the reservation expired mid-generation and the month filled up meanwhile.
  if (committed === 'limit_reached') throw limitReached(deps.now());
  return result;
}

/** The question's KB hits, best first (scores that are not numbers left out). */
export async function searchKnowledge(
  deps: AnswerDeps,
  orgId: string,
  question: string,
  deadline: number | undefined,
): Promise<KbHit[]> {
  const hits = (await deps.knowledge.search(orgId, question.trim(), SEARCH_LIMIT, deadline)).filter(
    (h) => Number.isFinite(h.score),
  );
  return hits.sort((a, b) => b.score - a.score || (a.entryId < b.entryId ? -1 : 1));
}

/**
 * The hits an answer may be written from: those whose score, the probability that the
 * entry answers the question, is at least the relevance floor of the confidence model,
 * and that share at least one content word with the question. The second condition
 * keeps an entry with nothing in common with the question from being offered on
 * character-level resemblance alone (the calibration saw too few such matches to be
 * trusted on them).
 */
export function relevantHits(hits: KbHit[], question: string): KbHit[] {
  const asked = termSet(question);
  return hits.filter((h) => {
    if (h.score < RELEVANCE_FLOOR) return false;
    for (const t of termSet(`${h.question} ${h.answer}`)) if (asked.has(t)) return true;
    return false;
  });
}

/** False when no answer can be written from the hits: generateAnswer would answer NOT_FOUND_ANSWER. */
export function anyRelevant(hits: KbHit[], question: string): boolean {
  return relevantHits(hits, question).length > 0;
}

async function writeGroundedAnswer(
  deps: AnswerDeps,
  log: Logger,
  question: string,
  hits: KbHit[],
  policy: OrgPolicy,
  deadline: number | undefined,
): Promise<GeneratedAnswer> {
  const relevant = relevantHits(hits, question);
  if (relevant.length === 0) {
    return {
      answer: NOT_FOUND_ANSWER,
      confidence: answerConfidence(hits, null),
      answeredFully: false,
      highConfidence: false,
      sources: [],
      provider: 'none',
    };
  }

  const { draft, provider } = await draftAnswer(deps, log, question, relevant, deadline);
  const cited = new Set(draft.citedEntryIds);
  // Sources in ranking order: the entry cited first is the best-ranked one the answer uses
  // (the top hit, for the built-in provider), and confidence is about that entry.
  const sources = relevant
    .filter((h) => cited.has(h.entryId))
    .map((h) => ({ entryId: h.entryId, question: h.question, score: h.score }));
  const confidence = answerConfidence(hits, {
    ...draft,
    citedEntryIds: sources.map((s) => s.entryId),
  });
  return {
    answer: draft.answer,
    confidence,
    answeredFully: draft.answeredFully && sources.length > 0,
    // An answer grounded in no entry is never high-confidence, whatever the threshold.
    highConfidence: sources.length > 0 && confidence >= policy.highConfidenceThreshold,
    sources,
    provider,
  };
}

/** The LLM when configured and it returns a grounded draft in time; the built-in provider otherwise. */
async function draftAnswer(
  deps: AnswerDeps,
  log: Logger,
  question: string,
  entries: KbHit[],
  deadline: number | undefined,
): Promise<{ draft: AnswerDraft; provider: string }> {
  const now = deps.now().getTime();
  if (deps.llm) {
    const budgetEnd = Math.min(
      now + deps.llmTimeoutMs,
      (deadline ?? Infinity) - FALLBACK_RESERVE_MS,
    );
    if (budgetEnd - now >= MIN_LLM_MS) {
      try {
        const draft = await deps.llm.writeAnswer(question, entries, { deadline: budgetEnd });
        return { draft: checkGrounded(draft, entries), provider: deps.llm.name };
      } catch (err) {
        log.warn(
          { err: describe(err), provider: deps.llm.name },
          'LLM answer failed; using the built-in provider',
        );
      }
    } else {
      log.warn(
        { budgetMs: budgetEnd - now },
        'no time left for the LLM; using the built-in provider',
      );
    }
  }
  const draft = await deps.builtin.writeAnswer(question, entries, {
    deadline: deadline ?? now + deps.llmTimeoutMs,
  });
  return { draft: checkGrounded(draft, entries), provider: deps.builtin.name };
}

/** Rejects a draft that cites an entry it was not given, or has no text. */
export function checkGrounded(draft: AnswerDraft, entries: KbHit[]): AnswerDraft {
  const known = new Set(entries.map((e) => e.entryId));
  const unknown = draft.citedEntryIds.filter((id) => !known.has(id));
  if (unknown.length > 0)
    throw new Error(`answer cites unknown entries: ${unknown.slice(0, 3).join(', ')}`);
  if (draft.answer.trim() === '') throw new Error('answer is empty');
  return { ...draft, citedEntryIds: [...new Set(draft.citedEntryIds)] };
}

function limitReached(at: Date): AppError {
  return new AppError(
    'deflection_limit_reached',
    'the monthly deflection limit of this organization is reached',
    {
      retryAfter: secondsUntilNextMonth(at),
    },
  );
}

/** Ledger (database) failures are a backing service being down, not a bug. */
async function ledgerCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new AppError('service_unavailable', 'the deflection ledger is unavailable', {
      retryAfter: 1,
      cause: err,
    });
  }
}

/** A failed release is logged, not thrown: the sweeper releases the slot when it expires. */
async function releaseQuietly(deps: AnswerDeps, log: Logger, requestId: string): Promise<void> {
  try {
    await deps.ledger.release(requestId);
  } catch (err) {
    log.warn({ err: describe(err) }, 'releasing a deflection slot failed; it expires on its own');
  }
}

export function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A reservation key for one API generation (never reused, unlike a triage event id). */
export function newRequestId(): string {
  return `api-${randomUUID()}`;
}
