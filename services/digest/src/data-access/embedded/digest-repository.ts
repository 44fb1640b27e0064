import { chunks, JournaledStore, type Logger } from '@support-agent/shared';
import { applyTicketEvent, type TicketAggregate } from '../../domain/aggregate.js';
import type { TicketEvent } from '../../domain/events.js';
import type {
  ApplyOutcome,
  DigestRepository,
  RunState,
  StoredDigest,
  WeekCount,
  WeekTicket,
} from '../../domain/ports.js';

type StoredTicket = Omit<TicketAggregate, 'createdAt' | 'statusAt' | 'triagedAt'> & {
  createdAt: number | null;
  statusAt: number | null;
  triagedAt: number | null;
};

type StoredDigestRecord = Omit<StoredDigest, 'generatedAt'> & { generatedAt: number };

interface RunRecord {
  holder: string;
  finished: boolean;
  orgsBuilt: number;
}

/** One line of the journal; each line is one atomic change. */
type JournalRecord =
  /** An applied event: its id, the ticket's new state, and the week it was counted in (first created event). */
  | { k: 'ev'; id: string; t: StoredTicket; w?: string }
  /** A ticket state from a backfill (counted in `w` when new). */
  | { k: 'snap'; t: StoredTicket; w?: string }
  | { k: 'reset'; forget: boolean }
  | { k: 'digest'; d: StoredDigestRecord }
  | { k: 'run'; week: string; run: RunRecord }
  /** Compaction only: processed ids, ticket states and week counts as they stood. */
  | { k: 'ids'; ids: string[] }
  | { k: 'tickets'; ts: StoredTicket[] }
  | { k: 'weeks'; counts: Array<[string, string, number]> };

const JOURNAL_FILE = 'journal.jsonl';
const COMPACT_CHUNK = 1_000;

/**
 * The digest's aggregates, digests and run records in memory, persisted to an
 * fsynced JSON-lines journal under DATA_DIR/digest (one process per directory).
 * An event's id, the ticket state it produced and its week count are one
 * journal line, so a crash keeps all of them or none.
 */
export class EmbeddedDigestRepository
  extends JournaledStore<JournalRecord>
  implements DigestRepository
{
  private readonly processed = new Set<string>();
  private readonly tickets = new Map<string, TicketAggregate>();
  private readonly weeks = new Map<string, number>();
  private readonly digests = new Map<string, StoredDigest>();
  private readonly runs = new Map<string, RunRecord>();

  private constructor(dir: string) {
    super(dir, JOURNAL_FILE, 'digest');
  }

  static open(dir: string, logger: Logger): EmbeddedDigestRepository {
    const repo = new EmbeddedDigestRepository(dir);
    try {
      const lines = repo.journal.replay((r) => repo.apply(r));
      const live = repo.tickets.size + repo.digests.size + repo.processed.size / COMPACT_CHUNK;
      if (lines > 2 * live + 1_000) {
        repo.compact();
        logger.info({ dir, lines, live }, 'digest journal compacted');
      }
      logger.info(
        {
          dir,
          tickets: repo.tickets.size,
          processedEvents: repo.processed.size,
          digests: repo.digests.size,
        },
        'embedded digest store open',
      );
      return repo;
    } catch (err) {
      void repo.close();
      throw err;
    }
  }

  async applyEvent(event: TicketEvent): Promise<ApplyOutcome> {
    if (this.processed.has(event.id)) return 'duplicate';
    const { next, countedWeek } = applyTicketEvent(
      this.tickets.get(key(event.org_id, event.ticket_number)),
      event,
    );
    this.record({
      k: 'ev',
      id: event.id,
      t: toStored(next),
      ...(countedWeek ? { w: countedWeek } : {}),
    });
    return 'applied';
  }

  async applyEvents(events: TicketEvent[]): Promise<ApplyOutcome[]> {
    const outcomes: ApplyOutcome[] = [];
    for (const event of events) outcomes.push(await this.applyEvent(event));
    return outcomes;
  }

  async applySnapshot(ticket: TicketAggregate): Promise<boolean> {
    const current = this.tickets.get(key(ticket.orgId, ticket.ticketId));
    const counted =
      ticket.weekStart !== null && (current === undefined || current.createdAt === null);
    this.record({ k: 'snap', t: toStored(ticket), ...(counted ? { w: ticket.weekStart! } : {}) });
    return counted;
  }

  async resetAggregates(options: { forgetProcessedEvents: boolean }): Promise<void> {
    this.record({ k: 'reset', forget: options.forgetProcessedEvents });
  }

  async weekTickets(orgId: string, weekStart: string, limit: number): Promise<WeekTicket[]> {
    const out: WeekTicket[] = [];
    for (const t of this.tickets.values()) {
      if (t.orgId !== orgId || t.weekStart !== weekStart || t.createdAt === null) continue;
      out.push({
        ticketId: t.ticketId,
        content: t.content ?? '',
        createdAt: t.createdAt,
        category: t.category,
        status: t.status,
        answered: t.answered,
        aiSummary: t.aiSummary,
        aiAnswer: t.aiAnswer,
      });
    }
    out.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.ticketId - b.ticketId);
    return out.slice(0, limit);
  }

  async weekTicketCount(orgId: string, weekStart: string): Promise<number> {
    return this.weeks.get(weekKey(orgId, weekStart)) ?? 0;
  }

  async orgsWithTickets(weekStart: string): Promise<string[]> {
    return (await this.weekCounts())
      .filter((c) => c.weekStart === weekStart && c.ticketCount > 0)
      .map((c) => c.orgId);
  }

  async weekCounts(): Promise<WeekCount[]> {
    return [...this.weeks.entries()]
      .map(([k, ticketCount]) => {
        const [orgId, weekStart] = JSON.parse(k) as [string, string];
        return { orgId, weekStart, ticketCount };
      })
      .sort((a, b) => cmp(a.orgId, b.orgId) || cmp(a.weekStart, b.weekStart));
  }

  async saveDigest(d: StoredDigest): Promise<void> {
    this.record({ k: 'digest', d: { ...d, generatedAt: d.generatedAt.getTime() } });
  }

  async digestOf(orgId: string, weekStart: string): Promise<StoredDigest | undefined> {
    return this.digests.get(weekKey(orgId, weekStart));
  }

  async latestDigest(orgId: string, withSummary = true): Promise<StoredDigest | undefined> {
    let latest: StoredDigest | undefined;
    for (const d of this.digests.values()) {
      if (d.orgId === orgId && (!latest || d.weekStart > latest.weekStart)) latest = d;
    }
    return latest && !withSummary ? { ...latest, summary: undefined } : latest;
  }

  /** One process owns the directory, so the lease is always ours. */
  /** One process: its own clock is the only one. */
  async clock(): Promise<Date> {
    return new Date();
  }

  async tryAcquireLease(): Promise<boolean> {
    return true;
  }

  async releaseLease(): Promise<void> {}

  async runState(weekStart: string): Promise<RunState> {
    const run = this.runs.get(weekStart);
    return !run ? 'none' : run.finished ? 'finished' : 'running';
  }

  /** A run left unfinished by a crash is taken over at once: no other process can be running it. */
  async claimRun(weekStart: string, holder: string): Promise<boolean> {
    if (this.runs.get(weekStart)?.finished) return false;
    this.record({ k: 'run', week: weekStart, run: { holder, finished: false, orgsBuilt: 0 } });
    return true;
  }

  async heartbeatRun(): Promise<void> {}

  async finishRun(weekStart: string, holder: string, orgsBuilt: number): Promise<void> {
    this.record({ k: 'run', week: weekStart, run: { holder, finished: true, orgsBuilt } });
  }

  protected apply(r: JournalRecord): void {
    switch (r.k) {
      case 'ev':
        this.processed.add(r.id);
        this.putTicket(r.t, r.w);
        return;
      case 'snap':
        this.putTicket(r.t, r.w);
        return;
      case 'reset':
        this.tickets.clear();
        this.weeks.clear();
        if (r.forget) this.processed.clear();
        return;
      case 'digest':
        this.digests.set(weekKey(r.d.orgId, r.d.weekStart), {
          ...r.d,
          generatedAt: new Date(r.d.generatedAt),
        });
        return;
      case 'run':
        this.runs.set(r.week, r.run);
        return;
      case 'ids':
        for (const id of r.ids) this.processed.add(id);
        return;
      case 'tickets':
        for (const t of r.ts) this.putTicket(t, undefined);
        return;
      case 'weeks':
        for (const [org, week, n] of r.counts) this.weeks.set(weekKey(org, week), n);
        return;
    }
  }

  private putTicket(stored: StoredTicket, countedWeek: string | undefined): void {
    const t = fromStored(stored);
    this.tickets.set(key(t.orgId, t.ticketId), t);
    if (countedWeek) {
      const k = weekKey(t.orgId, countedWeek);
      this.weeks.set(k, (this.weeks.get(k) ?? 0) + 1);
    }
  }

  /** Rewrites the journal as the current state (temporary file, fsync, rename). */
  private compact(): void {
    const records: JournalRecord[] = [];
    const ids = [...this.processed];
    for (const part of chunks(ids, COMPACT_CHUNK)) records.push({ k: 'ids', ids: part });
    const ts = [...this.tickets.values()].map(toStored);
    for (const part of chunks(ts, COMPACT_CHUNK)) records.push({ k: 'tickets', ts: part });
    const counts = [...this.weeks.entries()].map(
      ([k, n]) => [...(JSON.parse(k) as [string, string]), n] as [string, string, number],
    );
    for (const part of chunks(counts, COMPACT_CHUNK)) records.push({ k: 'weeks', counts: part });
    for (const d of this.digests.values())
      records.push({ k: 'digest', d: { ...d, generatedAt: d.generatedAt.getTime() } });
    for (const [week, run] of this.runs) records.push({ k: 'run', week, run });

    this.journal.rewrite(records);
  }
}

function key(orgId: string, ticketId: number): string {
  return `${orgId}\u0000${ticketId}`;
}

function weekKey(orgId: string, weekStart: string): string {
  return JSON.stringify([orgId, weekStart]);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function toStored(t: TicketAggregate): StoredTicket {
  return {
    ...t,
    createdAt: t.createdAt?.getTime() ?? null,
    statusAt: t.statusAt?.getTime() ?? null,
    triagedAt: t.triagedAt?.getTime() ?? null,
  };
}

function fromStored(s: StoredTicket): TicketAggregate {
  const date = (ms: number | null) => (ms === null ? null : new Date(ms));
  return {
    ...s,
    createdAt: date(s.createdAt),
    statusAt: date(s.statusAt),
    triagedAt: date(s.triagedAt),
  };
}
