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
import type { TicketLabels, TicketsPort } from './ports.js';
import { oneSentence } from './summary.js';
import { truncateCodePoints } from './text.js';

export interface TriageDeps extends AnswerDeps {
  tickets: TicketsPort;
}

/** Deliveries during which a down knowledge service or ledger is waited for before labels go out without an answer. */
export const ANSWER_ATTEMPTS = 5;
/** Longest ticket text classified (tickets are at most 4000 code points; ClassifyTicket may get more). */
const CLASSIFY_MAX = 100_000;
/** What tickets stores at most as ai_answer. */
const AI_ANSWER_MAX = 20_000;

/** A tickets.created event, as the events contract parses it (packages/events). */
export type TicketCreatedEvent = TicketEventOf<'tickets.created'>;

export interface LabelResult extends TicketLabels {
  provider: string;
}

/** The classification step: the LLM when configured (strict JSON schema), else or on any failure the built-in model. */
export async function labelTicket(
  deps: TriageDeps | AnswerDeps,
  content: string,
): Promise<LabelResult> {
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
 * once and tickets applies it once. Throws when the event should be retried.
 */
export async function triageTicket(
  deps: TriageDeps,
  event: TicketCreatedEvent,
  attempt: number,
): Promise<TriageResult> {
  const log = deps.logger.child({
    orgId: event.org_id,
    ticketId: event.ticket_id,
    eventId: event.id,
  });
  const content = event.data.content;
  const labels =
    content.trim() === ''
      ? {
          category: 'general_question' as const,
          priority: 'low' as const,
          summary: 'Empty ticket.',
          provider: 'none',
        }
      : await labelTicket(deps, content);

  let answer: AnswerOutcome = 'low_confidence';
  let aiAnswer: string | undefined;
  if (content.trim() !== '') {
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
      if (result?.highConfidence) {
        answer = 'resolved';
        aiAnswer = truncateCodePoints(result.answer, AI_ANSWER_MAX);
      }
    } catch (err) {
      if (err instanceof AppError && err.code === 'deflection_limit_reached') {
        answer = 'limit_reached';
        log.info('deflection limit reached: ticket left open for people');
      } else if (attempt < ANSWER_ATTEMPTS && isTransient(err)) {
        throw err;
      } else {
        answer = 'unavailable';
        log.warn({ err: describe(err), attempt }, 'automatic answer failed; applying labels only');
      }
    }
  }

  const { applied } = await deps.tickets.applyTriage({
    orgId: event.org_id,
    ticketId: event.ticket_id,
    eventId: event.id,
    category: labels.category,
    priority: labels.priority,
    aiSummary: labels.summary,
    aiAnswer,
    resolve: answer === 'resolved',
  });
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

/** Errors worth waiting for: a backing service down, or a bug that may be a one-off. */
export function isTransient(err: unknown): boolean {
  if (!(err instanceof AppError)) return true;
  return (
    err.code === 'service_unavailable' ||
    err.code === 'internal_error' ||
    err.code === 'rate_limited'
  );
}
