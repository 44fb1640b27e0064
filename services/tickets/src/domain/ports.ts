import type { PublishReport } from '@support-agent/events';
import type { OutboxMessage, TicketEvent } from './events.js';
import type { ListPosition, Ticket, TicketDraft, TicketFilters } from './ticket.js';

/** Result of inserting a ticket: created, or the ticket that already holds the idempotency key. */
export type InsertOutcome =
  { kind: 'created'; ticket: Ticket } | { kind: 'duplicate'; ticketId: number };

/** What a use case wants done to a locked ticket: its next state and the events to record with it. */
export interface TicketChange {
  next: Ticket;
  events: TicketEvent[];
}

export type UpdateOutcome =
  | { kind: 'not_found' }
  /** The once-key (a triage event id) had been recorded before: nothing changed. */
  | { kind: 'already_applied'; ticket: Ticket }
  | { kind: 'unchanged'; ticket: Ticket }
  | { kind: 'updated'; ticket: Ticket };

export interface ListQuery {
  orgId: string;
  filters: TicketFilters;
  /** Return only tickets strictly after this position in list order. */
  after?: ListPosition | undefined;
  limit: number;
}

/** The broker side of the outbox: the events contract's one publisher (packages/events). */
export type { EventPublisher, PublishReport } from '@support-agent/events';

export interface RelayBatchResult {
  /** Unpublished events picked up (and locked against other relays). */
  claimed: number;
  /** Events marked published. */
  published: number;
  error?: unknown;
}

/** The outbox side of the store, as the relay sees it. */
export interface OutboxStore {
  /**
   * Takes up to `limit` unpublished events, oldest first, skipping those another
   * relay holds; publishes them with `publish` and marks the acknowledged ones
   * published in the same unit of work. Unacknowledged events stay for the next try.
   */
  relayBatch(
    limit: number,
    publish: (messages: OutboxMessage[]) => Promise<PublishReport>,
  ): Promise<RelayBatchResult>;
  /** Deletes published events older than `cutoff`; returns how many. */
  purgePublished(cutoff: Date): Promise<number>;
  /** Events not yet published (the outbox_backlog gauge). */
  countUnpublished(): Promise<number>;
}

/**
 * Tickets storage. Every write is one transaction that also records its events
 * in the outbox, so an event exists if and only if its change was committed.
 */
export interface TicketRepository extends OutboxStore {
  /**
   * Inserts a ticket and the events `eventsFor` derives from it (which need the new id).
   * When the draft's idempotency key is already taken in the org, inserts nothing.
   */
  insert(draft: TicketDraft, eventsFor: (ticket: Ticket) => TicketEvent[]): Promise<InsertOutcome>;
  findIdByIdempotencyKey(orgId: string, key: string): Promise<number | undefined>;
  get(orgId: string, ticketId: number): Promise<Ticket | undefined>;
  /** Tickets in list order (created_at desc, id desc). */
  list(query: ListQuery): Promise<Ticket[]>;
  /**
   * Locks the ticket, asks `decide` for the change (null = leave it alone; a thrown
   * error aborts), then writes it with its events. With `onceKey`, the key is
   * recorded in the same transaction and a repeat returns already_applied.
   */
  update(
    orgId: string,
    ticketId: number,
    decide: (current: Ticket) => TicketChange | null,
    options?: { onceKey?: string },
  ): Promise<UpdateOutcome>;
  /** The HMAC secret for cursors, shared by every replica using this store. */
  cursorSecret(): Promise<Buffer>;
  close(): Promise<void>;
}

/**
 * Fast path for idempotency keys: a short lock so concurrent callers with one key
 * queue behind a single insert, and a cache of key → ticket id for replays. Only a
 * helper: the store's unique key is the guarantee, so every method may throw
 * (backend down) and callers fall back to the store.
 */
export interface IdempotencyStore {
  lookup(orgId: string, keyHash: string): Promise<number | undefined>;
  remember(orgId: string, keyHash: string, ticketId: number): Promise<void>;
  /** Returns a token when the lock was taken, undefined when someone else holds it. */
  tryLock(orgId: string, keyHash: string, ttlMs: number): Promise<string | undefined>;
  unlock(orgId: string, keyHash: string, token: string): Promise<void>;
  /**
   * lookup, then tryLock when nothing is cached, in one round trip: the cached ticket id,
   * or the lock's token, or `busy` when someone else holds the lock.
   */
  claim(orgId: string, keyHash: string, ttlMs: number): Promise<IdempotencyClaim>;
  /** remember, then unlock, in one round trip. */
  settle(orgId: string, keyHash: string, token: string, ticketId: number): Promise<void>;
  close(): Promise<void>;
}

export type IdempotencyClaim = { ticketId: number } | { token: string } | 'busy';

/** What the use cases need, wired once in server.ts. */
export interface TicketsDeps {
  repo: TicketRepository;
  idempotency: IdempotencyStore;
  cursors: import('./cursor.js').CursorCodec;
  /** Called after a committed write that recorded events; wakes the outbox relay. */
  eventsWritten: () => void;
  now: () => Date;
}
