import { AppError, invalidRequest } from '@support-agent/shared';
import type { TicketEventOf } from '@support-agent/events';
import {
  anyRelevant,
  describe,
  generateAnswer,
  QUESTION_MAX,
  resolvePolicy,
  searchKnowledge,
  type AnswerDeps,
} from './generate-answer.js';
import type { OrgModelRegistry } from './org-triage/model-registry.js';
import { classifyWithOrgModel } from './org-triage/org-model.js';
import type { TicketLabels, TicketsPort } from './ports.js';
import { oneSentence } from './summary.js';
import { truncateCodePoints } from './text.js';

export interface TriageDeps extends AnswerDeps {
  tickets: TicketsPort;
  /** Each organization's own active model, when it has one (else the built-in classifier). */
  orgModels?: OrgModelRegistry;
  /** What was worked out for events whose ApplyTriage has not succeeded yet (see TriageMemo). */
  memo?: TriageMemo;
}

/** Deliveries during which a down knowledge service or ledger is waited for before labels go out without an answer. */
export const ANSWER_ATTEMPTS = 5;
/** Longest ticket text classified (tickets are at most 4000 code points; ClassifyTicket may get more). */
const CLASSIFY_MAX = 100_000;
/** What tickets stores at most as ai_answer. */
const AI_ANSWER_MAX = 20_000;

/** A tickets.created event, as the events contract parses it (packages/events). */
export type TicketCreatedEvent = TicketEventOf<'tickets.created'>;

export interface LabelResult extends Omit<TicketLabels, 'category' | 'probabilities'> {
  /** One of the organization's own categories when its model classified, else a built-in one. */
  category: string;
  probabilities?: Record<string, number>;
  provider: string;
  /** The organization's model version that chose the category; 0: the built-in labels. */
  modelVersion: number;
}

/**
 * The classification step: priority and summary from the LLM when configured (strict JSON
 * schema), else or on any failure from the built-in model; the category from the
 * organization's own active model when it has one, else from the same labels.
 */
export async function labelTicket(
  deps: TriageDeps | AnswerDeps,
  content: string,
  orgId?: string,
): Promise<LabelResult> {
  const labels = await builtinOrLlmLabels(deps, content);
  const own = orgId ? (deps as TriageDeps).orgModels?.get(orgId) : undefined;
  if (!own) return { ...labels, modelVersion: 0 };
  const { category, probabilities } = classifyWithOrgModel(
    own.model,
    truncateCodePoints(content, CLASSIFY_MAX),
  );
  return { ...labels, category, probabilities, modelVersion: own.version };
}

async function builtinOrLlmLabels(
  deps: TriageDeps | AnswerDeps,
  content: string,
): Promise<Omit<LabelResult, 'modelVersion'>> {
  if (content.trim() === '') throw invalidRequest('content is required', 'content');
  const text = truncateCodePoints(content, CLASSIFY_MAX);
  if (deps.llm) {
    try {
      const labels = await deps.llm.labelTicket(text, {
        deadline: deps.now().getTime() + deps.llmTimeoutMs,
      });
      return { ...labels, summary: oneSentence(labels.summary), provider: deps.llm.name };
    } catch (err) {
      deps.logger.warn(
        { err: describe(err), provider: deps.llm.name },
        'LLM labels failed; using the built-in classifier',
      );
    }
  }
  const labels = await deps.builtin.labelTicket(text, { deadline: Infinity });
  return { ...labels, provider: deps.builtin.name };
}

export type AnswerOutcome =
  | 'resolved' // high-confidence answer, ticket resolved
  | 'low_confidence' // answered below the threshold: left open, nothing counted
  | 'limit_reached' // deflection limit reached: no answer, left open
  | 'unavailable'; // knowledge or ledger down for ANSWER_ATTEMPTS deliveries: labels only

/** What triage works out for one event before ApplyTriage. */
interface Worked {
  labels?: LabelResult;
  answer?: { outcome: AnswerOutcome; aiAnswer: string | undefined };
}

/**
 * Labels and answers of events whose ApplyTriage has not succeeded yet, by event id, so a
 * redelivery after a transient failure does not classify, search or answer again (an LLM call
 * each). In process only and bounded (the oldest is forgotten first): a redelivery to another
 * replica, or past the bound, works it out again, which the ledger and tickets absorb by event id.
 */
export class TriageMemo {
  private readonly entries = new Map<string, Worked>();

  constructor(private readonly max = 1_000) {}

  get(eventId: string): Worked {
    return this.entries.get(eventId) ?? {};
  }

  set(eventId: string, worked: Worked): void {
    this.entries.delete(eventId);
    this.entries.set(eventId, worked);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }

  delete(eventId: string): void {
    this.entries.delete(eventId);
  }
}

export interface TriageResult {
  labels: LabelResult;
  answer: AnswerOutcome;
  /** False when tickets had already applied this event (a redelivery). */
  applied: boolean;
}

/**
 * Triage of one new ticket: labels, an automatic answer through the same path as
 * GenerateAnswer (same ledger, request id = event id, the org's stored policy),
 * then ApplyTriage. Safe to repeat for one event: the ledger counts the event id
 * once and tickets applies it once; a retry in this process reuses the labels and
 * answer already worked out (deps.memo). Throws when the event should be retried.
 */
export async function triageTicket(
  deps: TriageDeps,
  event: TicketCreatedEvent,
  attempt: number,
): Promise<TriageResult> {
  const log = deps.logger.child({
    orgId: event.org_id,
    ticketId: event.ticket_number,
    eventId: event.id,
  });
  const content = event.data.content;
  const worked = deps.memo?.get(event.id) ?? {};
  const labels =
    worked.labels ??
    (content.trim() === ''
      ? {
          category: 'general_question' as const,
          priority: 'low' as const,
          summary: 'Empty ticket.',
          provider: 'none',
          modelVersion: 0,
        }
      : await labelTicket(deps, content, event.org_id));
  deps.memo?.set(event.id, { ...worked, labels });
  const { outcome: answer, aiAnswer } =
    worked.answer ?? (await answerTicket(deps, event, content, attempt, log));
  deps.memo?.set(event.id, { labels, answer: { outcome: answer, aiAnswer } });

  let applied: boolean;
  try {
    ({ applied } = await deps.tickets.applyTriage({
      orgId: event.org_id,
      ticketId: event.ticket_number,
      eventId: event.id,
      category: labels.category,
      priority: labels.priority,
      aiSummary: labels.summary,
      aiAnswer,
      resolve: answer === 'resolved',
    }));
  } catch (err) {
    if (!isTransient(err)) deps.memo?.delete(event.id); // dropped: never retried
    throw err;
  }
  deps.memo?.delete(event.id);
  log.info(
    {
      category: labels.category,
      priority: labels.priority,
      answer,
      applied,
      provider: labels.provider,
    },
    'ticket triaged',
  );
  return { labels, answer, applied };
}

/**
 * The automatic answer through the same path as GenerateAnswer; throws when the event should
 * be retried (knowledge or the ledger down, for the first ANSWER_ATTEMPTS deliveries).
 */
async function answerTicket(
  deps: TriageDeps,
  event: TicketCreatedEvent,
  content: string,
  attempt: number,
  log: TriageDeps['logger'],
): Promise<{ outcome: AnswerOutcome; aiAnswer: string | undefined }> {
  if (content.trim() === '') return { outcome: 'low_confidence', aiAnswer: undefined };
  try {
    const question = truncateCodePoints(content, QUESTION_MAX);
    // Searched before a deflection slot is reserved: when nothing relevant is found no answer
    // can be written, so the ticket goes out unanswered without two ledger transactions.
    const hits = await searchKnowledge(deps, event.org_id, question, undefined);
    const result = anyRelevant(hits, question)
      ? await generateAnswer(deps, {
          orgId: event.org_id,
          question,
          policy: await resolvePolicy(deps.policies, event.org_id, undefined),
          requestId: event.id,
          hits,
        })
      : undefined;
    return result?.highConfidence
      ? { outcome: 'resolved', aiAnswer: truncateCodePoints(result.answer, AI_ANSWER_MAX) }
      : { outcome: 'low_confidence', aiAnswer: undefined };
  } catch (err) {
    if (err instanceof AppError && err.code === 'deflection_limit_reached') {
      log.info('deflection limit reached: ticket left open for people');
      return { outcome: 'limit_reached', aiAnswer: undefined };
    }
    if (attempt < ANSWER_ATTEMPTS && isTransient(err)) throw err;
    log.warn({ err: describe(err), attempt }, 'automatic answer failed; applying labels only');
    return { outcome: 'unavailable', aiAnswer: undefined };
  }
}

/** Errors worth waiting for: a backing service down, or a bug that may be a one-off. */
export function isTransient(err: unknown): boolean {
  if (!(err instanceof AppError)) return true;
  return (
    err.code === 'service_unavailable' ||
    err.code === 'internal_error' ||
    err.code === 'rate_limited'
  );
}
