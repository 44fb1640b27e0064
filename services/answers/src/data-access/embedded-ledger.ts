import { JournaledStore, type Logger } from '@support-agent/shared';
import { monthOf } from '../domain/month.js';
import type {
  CommitOutcome,
  DeflectionLedger,
  OrgPolicy,
  PolicyStore,
  ReserveOutcome,
  ReserveRequest,
} from '../domain/ports.js';

type Record =
  | { t: 'reserve'; id: string; org: string; month: string; exp: number; at: number }
  | { t: 'extend'; id: string; exp: number; at: number }
  | { t: 'commit'; id: string; month: string; at: number }
  | { t: 'release'; id: string; at: number }
  | { t: 'purge'; before: number }
  | { t: 'policy'; org: string; limit: number; threshold: number; at: number };

interface Reservation {
  orgId: string;
  month: string;
  state: 'reserved' | 'committed' | 'released';
  expiresAt: number;
  updatedAt: number;
}

/** Journals longer than this many records beyond the live state are rewritten at start-up. */
const COMPACT_SLACK = 10_000;

/**
 * The deflection ledger and org policies for embedded mode (`npm start`): state
 * in memory, every change fsynced to a JSONL journal before it takes effect and
 * replayed at start-up. One process owns DATA_DIR/answers; each operation runs
 * without awaiting in between, so it is atomic on Node's single thread.
 */
export class EmbeddedLedger
  extends JournaledStore<Record>
  implements DeflectionLedger, PolicyStore
{
  private readonly reservations = new Map<string, Reservation>();
  private readonly months = new Map<string, { used: number; reserved: number }>();
  /** Each organization's latest month with a counter: months never go back (see monthFor). */
  private readonly latestMonth = new Map<string, string>();
  private readonly policies = new Map<string, OrgPolicy>();

  private constructor(
    dir: string,
    private readonly logger: Logger,
  ) {
    super(dir, 'ledger.jsonl');
  }

  static open(dir: string, logger: Logger): EmbeddedLedger {
    const ledger = new EmbeddedLedger(dir, logger);
    const records = ledger.journal.replay((r) => ledger.apply(r));
    if (records > ledger.liveRecordCount() + COMPACT_SLACK) ledger.compact();
    logger.info({ file: ledger.journal.path, records }, 'deflection ledger: embedded journal');
    return ledger;
  }

  async reserve(req: ReserveRequest): Promise<ReserveOutcome> {
    const at = req.now.getTime();
    const existing = this.reservations.get(req.requestId);
    if (existing?.state === 'committed')
      return { kind: 'already_committed', month: existing.month };
    if (existing?.state === 'reserved') {
      this.record({
        t: 'extend',
        id: req.requestId,
        exp: Math.max(existing.expiresAt, at + req.ttlMs),
        at,
      });
      return { kind: 'reserved', month: existing.month };
    }
    const month = this.monthFor(req.orgId, req.now);
    const c = this.counter(req.orgId, month);
    if (c.used + c.reserved >= req.limit) return { kind: 'limit_reached', month };
    this.record({
      t: 'reserve',
      id: req.requestId,
      org: req.orgId,
      month,
      exp: at + req.ttlMs,
      at,
    });
    return { kind: 'reserved', month };
  }

  async commit(requestId: string, limit: number, now: Date): Promise<CommitOutcome> {
    const r = this.reservations.get(requestId);
    if (!r) throw new Error(`no deflection reservation for request ${requestId}`);
    if (r.state === 'committed') return 'already_committed';
    let month = r.month;
    if (r.state === 'released') {
      month = this.monthFor(r.orgId, now);
      const c = this.counter(r.orgId, month);
      if (c.used + c.reserved >= limit) return 'limit_reached';
    }
    this.record({ t: 'commit', id: requestId, month, at: now.getTime() });
    return 'committed';
  }

  async release(requestId: string): Promise<void> {
    if (this.reservations.get(requestId)?.state === 'reserved') {
      this.record({ t: 'release', id: requestId, at: Date.now() });
    }
  }

  async releaseExpired(now: Date): Promise<number> {
    let released = 0;
    for (const [id, r] of this.reservations) {
      if (r.state === 'reserved' && r.expiresAt < now.getTime()) {
        this.record({ t: 'release', id, at: now.getTime() });
        this.logger.warn({ requestId: id }, 'released an expired deflection reservation');
        released++;
      }
    }
    return released;
  }

  async used(orgId: string, month: string): Promise<number> {
    return this.months.get(key(orgId, month))?.used ?? 0;
  }

  async purge(before: Date): Promise<number> {
    const n = [...this.reservations.values()].filter((r) =>
      settledBefore(r, before.getTime()),
    ).length;
    if (n > 0) this.record({ t: 'purge', before: before.getTime() });
    return n;
  }

  async get(orgId: string): Promise<OrgPolicy | undefined> {
    return this.policies.get(orgId);
  }

  async set(orgId: string, policy: OrgPolicy, now: Date): Promise<void> {
    this.record({
      t: 'policy',
      org: orgId,
      limit: policy.deflectionMonthlyLimit,
      threshold: policy.highConfidenceThreshold,
      at: now.getTime(),
    });
  }

  /**
   * The month a deflection at `now` counts in: the calendar month of `now`, but never one before
   * the organization's latest (a clock stepped back across a month boundary does not reopen the
   * previous month's counter: a month's limit starts over once).
   */
  private monthFor(orgId: string, now: Date): string {
    const month = monthOf(now);
    const latest = this.latestMonth.get(orgId);
    return latest !== undefined && latest > month ? latest : month;
  }

  private counter(orgId: string, month: string): { used: number; reserved: number } {
    if (month > (this.latestMonth.get(orgId) ?? '')) this.latestMonth.set(orgId, month);
    const k = key(orgId, month);
    let c = this.months.get(k);
    if (!c) this.months.set(k, (c = { used: 0, reserved: 0 }));
    return c;
  }

  protected apply(r: Record): void {
    switch (r.t) {
      case 'reserve':
        this.counter(r.org, r.month).reserved++;
        this.reservations.set(r.id, {
          orgId: r.org,
          month: r.month,
          state: 'reserved',
          expiresAt: r.exp,
          updatedAt: r.at,
        });
        return;
      case 'extend': {
        const res = this.reservations.get(r.id);
        if (res) Object.assign(res, { expiresAt: r.exp, updatedAt: r.at });
        return;
      }
      case 'commit': {
        const res = this.reservations.get(r.id);
        if (!res || res.state === 'committed') return;
        if (res.state === 'reserved') this.decrementReserved(res);
        this.counter(res.orgId, r.month).used++;
        Object.assign(res, { state: 'committed', month: r.month, updatedAt: r.at });
        return;
      }
      case 'release': {
        const res = this.reservations.get(r.id);
        if (!res || res.state !== 'reserved') return;
        this.decrementReserved(res);
        Object.assign(res, { state: 'released', updatedAt: r.at });
        return;
      }
      case 'purge':
        for (const [id, res] of this.reservations)
          if (settledBefore(res, r.before)) this.reservations.delete(id);
        return;
      case 'policy':
        this.policies.set(r.org, {
          deflectionMonthlyLimit: r.limit,
          highConfidenceThreshold: r.threshold,
        });
        return;
    }
  }

  private decrementReserved(res: Reservation): void {
    const c = this.counter(res.orgId, res.month);
    c.reserved = Math.max(0, c.reserved - 1);
  }

  private liveRecordCount(): number {
    return this.reservations.size * 2 + this.policies.size + this.months.size;
  }

  /**
   * Rewrites the journal as the records of the current state (written and
   * fsynced to a new file, then renamed over the old one).
   */
  private compact(): void {
    const records: Record[] = [];
    for (const [org, p] of this.policies) {
      records.push({
        t: 'policy',
        org,
        limit: p.deflectionMonthlyLimit,
        threshold: p.highConfidenceThreshold,
        at: 0,
      });
    }
    // Counts of purged reservations live only in the counters: carry them over as synthetic commits.
    const counted = new Map<string, number>();
    for (const [id, r] of this.reservations) {
      records.push({
        t: 'reserve',
        id,
        org: r.orgId,
        month: r.month,
        exp: r.expiresAt,
        at: r.updatedAt,
      });
      if (r.state === 'committed') {
        records.push({ t: 'commit', id, month: r.month, at: r.updatedAt });
        counted.set(key(r.orgId, r.month), (counted.get(key(r.orgId, r.month)) ?? 0) + 1);
      } else if (r.state === 'released') {
        records.push({ t: 'release', id, at: r.updatedAt });
      }
    }
    for (const [k, c] of this.months) {
      const [org = '', month = ''] = k.split('\u0000');
      for (let i = counted.get(k) ?? 0; i < c.used; i++) {
        const id = `compacted:${month}:${org}:${i}`;
        records.push(
          { t: 'reserve', id, org, month, exp: 0, at: 0 },
          { t: 'commit', id, month, at: 0 },
        );
      }
    }
    this.journal.rewrite(records);
    this.logger.info(
      { file: this.journal.path, records: records.length },
      'compacted the deflection journal',
    );
  }
}

function key(orgId: string, month: string): string {
  return `${orgId}\u0000${month}`;
}

function settledBefore(r: Reservation, before: number): boolean {
  return r.state !== 'reserved' && r.updatedAt < before;
}
