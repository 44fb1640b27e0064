import { randomBytes } from 'node:crypto';
import { chunks, JournaledStore, type Logger } from '@support-agent/shared';
import { toOutboxMessage, type OutboxMessage, type TicketEvent } from '../../domain/events.js';
import type {
  InsertOutcome,
  ListQuery,
  PublishReport,
  RelayBatchResult,
  TicketChange,
  TicketRepository,
  UpdateOutcome,
} from '../../domain/ports.js';
import type { Ticket, TicketDraft } from '../../domain/ticket.js';
import { SortedTicketIndex } from './sorted-index.js';

/**
 * A ticket as journaled. Records written before tickets had a number per organization have no
 * `globalId`: their `id` was the one counter's, and stays both their number (what clients hold)
 * and their key.
 */
interface StoredTicket extends Omit<Ticket, 'globalId' | 'createdAt' | 'updatedAt'> {
  globalId?: number;
  createdAt: number;
  updatedAt: number;
}

interface StoredEvent extends OutboxMessage {
  seq: number;
}

/** One line of the journal. A `tx` line is one transaction: all of it survives a crash, or none. */
type JournalRecord =
  | { k: 'secret'; secret: string }
  | { k: 'tx'; tickets?: StoredTicket[]; events?: StoredEvent[]; once?: string[] }
  | { k: 'published'; seqs: number[] };

const JOURNAL_FILE = 'journal.jsonl';
const SNAPSHOT_CHUNK = 500;

/**
 * Tickets in memory, persisted to an fsynced JSON-lines journal under
 * DATA_DIR/tickets: the store of `npm start` without MYSQL_URL. Each write is
 * journaled before it is applied, so a restart rebuilds exactly what was
 * acknowledged. One process per directory (a LOCK file enforces it).
 */
export class EmbeddedTicketRepository
  extends JournaledStore<JournalRecord>
  implements TicketRepository
{
  /** By (org, number). */
  private readonly tickets = new Map<string, Ticket>();
  /** (org, idempotency key) → number. */
  private readonly byIdempotencyKey = new Map<string, number>();
  /** Each organization's highest number. */
  private readonly lastNumber = new Map<string, number>();
  private readonly indexes = new Map<string, SortedTicketIndex>();
  /** Unpublished events in outbox order (Map keeps insertion order). */
  private readonly pending = new Map<number, StoredEvent>();
  private readonly inFlight = new Set<number>();
  private readonly onceKeys = new Set<string>();
  /** The next key (unique across organizations). */
  private nextGlobalId = 1;
  private nextSeq = 1;
  private secret: Buffer | undefined;

  private constructor(dir: string) {
    super(dir, JOURNAL_FILE, 'tickets');
  }

  static open(dir: string, logger: Logger): EmbeddedTicketRepository {
    const repo = new EmbeddedTicketRepository(dir);
    try {
      let written = 0;
      repo.journal.replay((record) => {
        written += repo.apply(record);
      });
      if (repo.journal.damaged > 0) {
        logger.warn({ dir, lines: repo.journal.damaged }, 'tickets journal: damaged lines skipped');
      }
      const live = repo.tickets.size + repo.pending.size + repo.onceKeys.size;
      if (written > 2 * live + 1_000) {
        try {
          repo.compact();
          logger.info({ dir, written, live }, 'tickets journal compacted');
        } catch (err) {
          // A full disk: the journal as it is stays valid; compaction waits for the next start.
          logger.warn({ dir, err }, 'tickets journal not compacted');
        }
      }
      logger.info(
        { dir, tickets: repo.tickets.size, pendingEvents: repo.pending.size },
        'embedded tickets store open',
      );
      return repo;
    } catch (err) {
      void repo.close();
      throw err;
    }
  }

  async insert(
    draft: TicketDraft,
    eventsFor: (ticket: Ticket) => TicketEvent[],
  ): Promise<InsertOutcome> {
    if (draft.idempotencyKey !== null) {
      const existing = this.byIdempotencyKey.get(keyOf(draft.orgId, draft.idempotencyKey));
      if (existing !== undefined) return { kind: 'duplicate', ticketId: existing };
    }
    const ticket: Ticket = {
      ...draft,
      id: (this.lastNumber.get(draft.orgId) ?? 0) + 1,
      globalId: this.nextGlobalId,
    };
    this.record({
      k: 'tx',
      tickets: [toStored(ticket)],
      events: this.toStoredEvents(eventsFor(ticket)),
    });
    return { kind: 'created', ticket: { ...ticket } };
  }

  async findIdByIdempotencyKey(orgId: string, key: string): Promise<number | undefined> {
    return this.byIdempotencyKey.get(keyOf(orgId, key));
  }

  async get(orgId: string, ticketId: number): Promise<Ticket | undefined> {
    const ticket = this.tickets.get(keyOf(orgId, ticketId));
    return ticket ? { ...ticket } : undefined;
  }

  async list(query: ListQuery): Promise<Ticket[]> {
    const { orgId, filters } = query;
    // Walk the smallest index that satisfies one filter; check the others on the way.
    const keys = [indexKey('o', orgId)];
    if (filters.status) keys.push(indexKey('s', orgId, filters.status));
    if (filters.priority) keys.push(indexKey('p', orgId, filters.priority));
    if (filters.category) keys.push(indexKey('c', orgId, filters.category));
    let index: SortedTicketIndex | undefined;
    for (const key of keys) {
      const candidate = this.indexes.get(key);
      if (!candidate) return []; // nothing matches this filter
      if (!index || candidate.size < index.size) index = candidate;
    }
    if (!index) return [];
    const out: Ticket[] = [];
    for (const t of index.newestFirst(query.after)) {
      if (filters.status && t.status !== filters.status) continue;
      if (filters.priority && t.priority !== filters.priority) continue;
      if (filters.category && t.category !== filters.category) continue;
      out.push({ ...t });
      if (out.length >= query.limit) break;
    }
    return out;
  }

  async update(
    orgId: string,
    ticketId: number,
    decide: (current: Ticket) => TicketChange | null,
    options: { onceKey?: string } = {},
  ): Promise<UpdateOutcome> {
    const current = this.tickets.get(keyOf(orgId, ticketId));
    if (!current) return { kind: 'not_found' };
    const { onceKey } = options;
    if (onceKey !== undefined && this.onceKeys.has(onceKey))
      return { kind: 'already_applied', ticket: { ...current } };
    const change = decide({ ...current });
    const once = onceKey === undefined ? {} : { once: [onceKey] };
    if (!change) {
      if (onceKey !== undefined) this.record({ k: 'tx', ...once });
      return { kind: 'unchanged', ticket: { ...current } };
    }
    const next: Ticket = {
      ...change.next,
      id: current.id,
      globalId: current.globalId,
      orgId: current.orgId,
      createdAt: current.createdAt,
    };
    this.record({
      k: 'tx',
      tickets: [toStored(next)],
      events: this.toStoredEvents(change.events),
      ...once,
    });
    return { kind: 'updated', ticket: { ...next } };
  }

  async cursorSecret(): Promise<Buffer> {
    if (!this.secret) this.record({ k: 'secret', secret: randomBytes(32).toString('base64') });
    return this.secret!;
  }

  async relayBatch(
    limit: number,
    publish: (messages: OutboxMessage[]) => Promise<PublishReport>,
  ): Promise<RelayBatchResult> {
    const batch: StoredEvent[] = [];
    for (const event of this.pending.values()) {
      if (this.inFlight.has(event.seq)) continue;
      batch.push(event);
      if (batch.length >= limit) break;
    }
    if (batch.length === 0) return { claimed: 0, published: 0 };
    for (const e of batch) this.inFlight.add(e.seq);
    try {
      const report = await publish(
        batch.map(({ eventId, subject, payload, traceparent }) => ({
          eventId,
          subject,
          payload,
          traceparent,
        })),
      );
      const done = new Set(report.published);
      const seqs = batch.filter((e) => done.has(e.eventId)).map((e) => e.seq);
      if (seqs.length > 0) this.record({ k: 'published', seqs });
      return {
        claimed: batch.length,
        published: seqs.length,
        ...(report.error === undefined ? {} : { error: report.error }),
      };
    } finally {
      for (const e of batch) this.inFlight.delete(e.seq);
    }
  }

  async countUnpublished(): Promise<number> {
    return this.pending.size;
  }

  /** Published events are dropped at once (and from the journal at the next compaction). */
  async purgePublished(_cutoff: Date): Promise<number> {
    return 0;
  }

  /** Applies one journal record to memory; returns how many items it wrote. */
  protected apply(record: JournalRecord): number {
    switch (record.k) {
      case 'secret':
        this.secret = Buffer.from(record.secret, 'base64');
        return 1;
      case 'published':
        for (const seq of record.seqs) this.pending.delete(seq);
        return record.seqs.length;
      case 'tx': {
        for (const stored of record.tickets ?? []) this.putTicket(fromStored(stored));
        for (const event of record.events ?? []) {
          this.pending.set(event.seq, event);
          this.nextSeq = Math.max(this.nextSeq, event.seq + 1);
        }
        for (const key of record.once ?? []) this.onceKeys.add(key);
        return (
          (record.tickets?.length ?? 0) + (record.events?.length ?? 0) + (record.once?.length ?? 0)
        );
      }
    }
  }

  private putTicket(ticket: Ticket): void {
    const at = keyOf(ticket.orgId, ticket.id);
    const previous = this.tickets.get(at);
    if (previous) for (const key of indexKeysOf(previous)) this.indexes.get(key)?.remove(previous);
    this.tickets.set(at, ticket);
    for (const key of indexKeysOf(ticket)) {
      let index = this.indexes.get(key);
      if (!index) this.indexes.set(key, (index = new SortedTicketIndex()));
      index.add(ticket);
    }
    if (ticket.idempotencyKey !== null) {
      this.byIdempotencyKey.set(keyOf(ticket.orgId, ticket.idempotencyKey), ticket.id);
    }
    this.lastNumber.set(ticket.orgId, Math.max(this.lastNumber.get(ticket.orgId) ?? 0, ticket.id));
    this.nextGlobalId = Math.max(this.nextGlobalId, ticket.globalId + 1);
  }

  private toStoredEvents(events: TicketEvent[]): StoredEvent[] {
    return events.map((e, i) => ({ seq: this.nextSeq + i, ...toOutboxMessage(e) }));
  }

  /** Rewrites the journal as a snapshot of the live state, atomically (write, fsync, rename). */
  private compact(): void {
    const records: JournalRecord[] = [];
    if (this.secret) records.push({ k: 'secret', secret: this.secret.toString('base64') });
    const all = [...this.tickets.values()].map(toStored);
    for (const part of chunks(all, SNAPSHOT_CHUNK)) records.push({ k: 'tx', tickets: part });
    if (this.pending.size > 0) records.push({ k: 'tx', events: [...this.pending.values()] });
    const once = [...this.onceKeys];
    for (const part of chunks(once, SNAPSHOT_CHUNK)) records.push({ k: 'tx', once: part });
    this.journal.rewrite(records);
  }
}

/** An (org, idempotency key) or (org, number) pair as one map key. */
function keyOf(orgId: string, value: string | number): string {
  return `${orgId}\u0000${value}`;
}

function indexKey(kind: 'o' | 's' | 'p' | 'c', orgId: string, value = ''): string {
  return `${kind}\u0000${orgId}\u0000${value}`;
}

function indexKeysOf(t: Ticket): string[] {
  const keys = [
    indexKey('o', t.orgId),
    indexKey('s', t.orgId, t.status),
    indexKey('p', t.orgId, t.priority),
  ];
  if (t.category !== null) keys.push(indexKey('c', t.orgId, t.category));
  return keys;
}

function toStored(t: Ticket): StoredTicket {
  return { ...t, createdAt: t.createdAt.getTime(), updatedAt: t.updatedAt.getTime() };
}

function fromStored(t: StoredTicket): Ticket {
  return {
    ...t,
    globalId: t.globalId ?? t.id,
    createdAt: new Date(t.createdAt),
    updatedAt: new Date(t.updatedAt),
  };
}
