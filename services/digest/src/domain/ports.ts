import type { KbHit } from '@support-agent/shared';
import type { TicketAggregate } from './aggregate.js';
import type { DigestSummary } from './digest-summary.js';
import type { TicketEvent } from './events.js';

/** A ticket of one week, as the digest builder reads it. */
export interface WeekTicket {
  ticketId: number;
  content: string;
  createdAt: Date;
  category: string | null;
  status: string | null;
  answered: boolean;
  aiSummary: string | null;
  aiAnswer: string | null;
}

export interface StoredDigest {
  orgId: string;
  weekStart: string;
  weekEnd: string;
  ticketCount: number;
  content: string;
  generatedAt: Date;
  /** The structured form; absent on digests built before it existed. */
  summary?: DigestSummary | undefined;
}

export interface WeekCount {
  orgId: string;
  weekStart: string;
  ticketCount: number;
}

export type ApplyOutcome = 'applied' | 'duplicate';

/** Weekly aggregates, maintained from ticket events exactly once per event id. */
export interface AggregateStore {
  /**
   * Records the event id and folds the event into the ticket and week rows in
   * one transaction; an id seen before changes nothing ('duplicate').
   */
  applyEvent(event: TicketEvent): Promise<ApplyOutcome>;
  /**
   * The same for several events in one transaction, folded in order (a ticket's events in one
   * batch one after the other); one outcome per event, a repeated id 'duplicate'.
   */
  applyEvents(events: TicketEvent[]): Promise<ApplyOutcome[]>;
  /** Backfill from the tickets table: stores a ticket's state, counting it if it was not counted yet. */
  applySnapshot(ticket: TicketAggregate): Promise<boolean>;
  /** Backfill: drops tickets and week counts; processed event ids too when the whole stream is replayed. */
  resetAggregates(options: { forgetProcessedEvents: boolean }): Promise<void>;
  /** The week's tickets in (created_at, ticket_id) order, at most `limit`. */
  weekTickets(orgId: string, weekStart: string, limit: number): Promise<WeekTicket[]>;
  weekTicketCount(orgId: string, weekStart: string): Promise<number>;
  /** Organizations with at least one ticket created in the week, sorted. */
  orgsWithTickets(weekStart: string): Promise<string[]>;
  /** Every (org, week) count, sorted; for backfill reports and tests. */
  weekCounts(): Promise<WeekCount[]>;
}

export interface DigestStore {
  /** Stores the week's digest, replacing an earlier build of the same week. */
  saveDigest(digest: StoredDigest): Promise<void>;
  /**
   * The digest with the newest week_start; without its summary (not read) when `withSummary`
   * is false: the public FAQ reads only the Markdown, and the summary is most of the row.
   */
  latestDigest(orgId: string, withSummary?: boolean): Promise<StoredDigest | undefined>;
  /** The digest of one week, if it was built. */
  digestOf(orgId: string, weekStart: string): Promise<StoredDigest | undefined>;
}

export type RunState = 'none' | 'running' | 'finished';

/** Coordination of the automatic weekly run across replicas. */
export interface ScheduleStore {
  /**
   * The time that says which week's run is due: the database's clock (one clock for every
   * replica, that a step of one replica's clock does not move), or this process's when embedded.
   */
  clock(): Promise<Date>;
  /** Takes or renews the named lease for `ttlMs`; false while another holder's lease is live. */
  tryAcquireLease(name: string, holder: string, ttlMs: number): Promise<boolean>;
  releaseLease(name: string, holder: string): Promise<void>;
  runState(weekStart: string): Promise<RunState>;
  /**
   * Check-and-mark in one transaction: true when this holder now owns the week's
   * run (no run yet, or an unfinished one whose heartbeat is older than staleMs).
   */
  claimRun(weekStart: string, holder: string, staleMs: number): Promise<boolean>;
  heartbeatRun(weekStart: string, holder: string): Promise<void>;
  finishRun(weekStart: string, holder: string, orgsBuilt: number): Promise<void>;
}

export interface DigestRepository extends AggregateStore, DigestStore, ScheduleStore {
  close(): Promise<void>;
}

/** One knowledge-base hit (the one definition, beside the knowledge client in packages/shared). */
export type { KbHit } from '@support-agent/shared';

export interface KnowledgeSearch {
  search(orgId: string, query: string, limit: number): Promise<KbHit[]>;
}

export interface Embeddings {
  vectors: Float32Array[];
  /** The vector space, e.g. `hashed/hashed-v1/512`; decides the clustering threshold. */
  fingerprint: string;
}

export interface Embedder {
  embed(texts: string[]): Promise<Embeddings>;
}

export interface TopicToSummarize {
  label: string;
  questions: string[];
  /** The grounded answer text the summary must stay within. */
  source: string;
}

/** Writes a concise answer summary per topic; undefined entries keep the extractive answer. */
export interface TopicSummarizer {
  readonly name: string;
  summarize(topics: TopicToSummarize[], timeoutMs: number): Promise<Array<string | undefined>>;
}
