/** The ports of the answers domain; adapters live in data-access/ and are wired in server.ts. */

import type { KbHit, TicketCategory, TicketPriority } from '@support-agent/shared';

/** The labels triage chooses among: the ticket fields' values (packages/shared). */
export {
  TICKET_CATEGORIES as CATEGORIES,
  TICKET_PRIORITIES as PRIORITIES,
} from '@support-agent/shared';
export type Category = TicketCategory;
export type Priority = TicketPriority;

/** Per-organization policy; the gateway owns it and passes or pushes it here. */
export interface OrgPolicy {
  deflectionMonthlyLimit: number;
  highConfidenceThreshold: number;
}

/** What an organization that never sent a policy gets (DESIGN.md §3). */
export const DEFAULT_POLICY: OrgPolicy = {
  deflectionMonthlyLimit: 1000,
  highConfidenceThreshold: 85,
};

/** One knowledge-base hit (the one definition, beside the knowledge client in packages/shared). */
export type { KbHit } from '@support-agent/shared';

export interface KnowledgeSearch {
  /**
   * Most relevant first. Throws AppError('service_unavailable') when knowledge is down
   * or does not answer before `deadline` (epoch ms, if given).
   */
  search(orgId: string, query: string, limit: number, deadline?: number): Promise<KbHit[]>;
}

/** An answer written from KB entries, before confidence is computed. */
export interface AnswerDraft {
  answer: string;
  answeredFully: boolean;
  /** Entries the answer is built from; always a subset of the entries given. */
  citedEntryIds: string[];
  /** The model's self-assessed support 0–100; null from the built-in (extractive) provider. */
  support: number | null;
}

export interface TicketLabels {
  category: Category;
  priority: Priority;
  /** One sentence. */
  summary: string;
  /** Per-category probabilities (sum 1), from the built-in classifier; an LLM gives none. */
  probabilities?: Record<Category, number>;
}

/** Time budget of one step, as an absolute epoch-ms deadline. */
export interface Budget {
  deadline: number;
}

/**
 * A language model (or the built-in stand-in). The LLM adapter may throw or time out;
 * callers fall back to the built-in provider, so a model failure never reaches a client.
 */
export interface LanguageModel {
  readonly name: string;
  writeAnswer(question: string, entries: KbHit[], budget: Budget): Promise<AnswerDraft>;
  labelTicket(content: string, budget: Budget): Promise<TicketLabels>;
}

export type ReserveOutcome =
  /** A slot is held for this request id (new, or a retry of a request still in flight). */
  | { kind: 'reserved'; month: string }
  /** This request id was already counted (a redelivered triage event): never count it again. */
  | { kind: 'already_committed'; month: string }
  | { kind: 'limit_reached'; month: string };

export type CommitOutcome = 'committed' | 'already_committed' | 'limit_reached';

export interface ReserveRequest {
  orgId: string;
  /** Unique per generation; the triage event id for automatic answers. */
  requestId: string;
  limit: number;
  now: Date;
  ttlMs: number;
}

/**
 * The monthly deflection ledger: per org per UTC month, `used` (committed) plus
 * `reserved` (in flight) never exceeds the limit, whatever the concurrency.
 */
export interface DeflectionLedger {
  reserve(request: ReserveRequest): Promise<ReserveOutcome>;
  /**
   * Turns the request's reservation into a counted deflection. If the reservation
   * had expired and been released meanwhile, takes a slot again when one is free.
   */
  commit(requestId: string, limit: number, now: Date): Promise<CommitOutcome>;
  /** Gives the slot back (low confidence, failure). No-op unless the request holds one. */
  release(requestId: string): Promise<void>;
  /** Releases reservations whose expiry passed (a generation that crashed); returns how many. */
  releaseExpired(now: Date): Promise<number>;
  /** Committed deflections of the org in the month. */
  used(orgId: string, month: string): Promise<number>;
  /** Forgets settled reservations (committed or released) last touched before `before`; returns how many. */
  purge(before: Date): Promise<number>;
  close(): Promise<void>;
}

/** The latest policy the gateway pushed per org, for triage (which has no caller to pass it). */
export interface PolicyStore {
  get(orgId: string): Promise<OrgPolicy | undefined>;
  set(orgId: string, policy: OrgPolicy, now: Date): Promise<void>;
}

export interface TriageReport {
  orgId: string;
  ticketId: number;
  eventId: string;
  /** A built-in category, or one of the organization's own. */
  category: string;
  priority: Priority;
  aiSummary: string;
  aiAnswer?: string | undefined;
  resolve: boolean;
}

export interface TicketsPort {
  /** Idempotent by eventId on the tickets side; `applied` is false for a repeat. */
  applyTriage(report: TriageReport): Promise<{ applied: boolean }>;
}
