import { AppError, type Logger } from '@support-agent/shared';
import { monthOf } from './month.js';
import type { DeflectionLedger, ReserveOutcome, ReserveRequest } from './ports.js';

/**
 * How long an API answer waits for its deflection slot with no reservation answered at all:
 * well under a second, so the answers that meet a silent ledger first are still answered
 * within one.
 */
export const LEDGER_WAIT_MS = 500;
/** A probe of a suspect ledger answered within this clears the suspicion. */
export const LEDGER_PROBE_MS = 300;

/** Time kept back from the caller's deadline to write the answer once the ledger gave up. */
const ANSWER_AFTER_LEDGER_MS = 500;

/** The promise's value, or 'late' when it has not settled within `ms`. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), Math.max(0, ms));
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The ledger did not answer the reservation in time or is down: the answer may not deflect. */
export interface LedgerUnanswered {
  kind: 'unanswered';
}

/**
 * Lets an API answer go on without the deflection ledger when the ledger (MariaDB) is silent,
 * slow or down. A reservation is waited for as long as the ledger answers others' (a busy
 * ledger is not a silent one) and the caller's deadline allows, but no longer than
 * LEDGER_WAIT_MS without any reservation answered; one that does not come (or fails as
 * unavailable) makes the ledger suspect. While it is suspect, answers do not ask it at all:
 * one read at a time probes it, and a probe answered within LEDGER_PROBE_MS ends the
 * suspicion. An answer without a slot is written all the same but never deflects (not
 * high-confidence, nothing counted), so the monthly limit can be neither exceeded nor counted
 * twice; a reservation that goes through after its answer gave up on it is released at once
 * (else the sweeper frees it at its expiry). An organization this process last saw at its limit
 * in the current month stays refused with deflection_limit_reached meanwhile.
 */
/** Times are on the monotonic clock: a wall-clock step neither starts nor ends a wait. */
export class LedgerFallback {
  private suspect = false;
  private probing = false;
  private lastAnsweredAt = -Infinity;
  /** Organization → the month in which its last reservation found the limit reached. */
  private readonly atLimit = new Map<string, string>();

  constructor(
    private readonly waitMs = LEDGER_WAIT_MS,
    private readonly probeMs = LEDGER_PROBE_MS,
  ) {}

  /**
   * The ledger's reservation, or `unanswered` when it is suspect, or silent for LEDGER_WAIT_MS
   * (no reservation answered meanwhile), or too slow for `deadline` (epoch ms) to be met.
   */
  async reserve(
    ledger: DeflectionLedger,
    req: ReserveRequest,
    log: Logger,
    deadline?: number,
  ): Promise<ReserveOutcome | LedgerUnanswered> {
    if (this.suspect) {
      this.probe(ledger, req, log);
      return { kind: 'unanswered' };
    }
    const started = performance.now();
    const pending = ledger.reserve(req);
    const settled = pending.then(
      (outcome) => {
        this.lastAnsweredAt = performance.now();
        return { outcome };
      },
      (err: unknown) => ({ err }),
    );
    // Waited for while the ledger makes progress (reservations of others keep being answered:
    // a busy ledger, contention on the month's counter) and the deadline leaves time to answer.
    const giveUpAt = started + (deadline ?? Infinity) - Date.now() - ANSWER_AFTER_LEDGER_MS;
    let first: { outcome: ReserveOutcome } | { err: unknown } | 'late';
    for (;;) {
      first = await within(settled, Math.min(this.waitMs, giveUpAt - performance.now()));
      const now = performance.now();
      if (first !== 'late' || now >= giveUpAt || now - this.lastAnsweredAt >= this.waitMs) break;
    }
    if (first === 'late') {
      // Suspect after a real wait only (a caller whose deadline left no time says nothing of it).
      if (performance.now() - started >= this.waitMs) {
        this.suspect = true;
        log.warn(
          { waitMs: performance.now() - started },
          'deflection ledger did not answer in time: answers do not deflect until it does',
        );
      }
      pending.then(
        (outcome) => {
          if (outcome.kind !== 'reserved') return;
          ledger.release(req.requestId).catch((err: unknown) => {
            log.warn({ err: String(err) }, 'releasing a late deflection slot failed; it expires');
          });
        },
        () => undefined,
      );
      return { kind: 'unanswered' };
    }
    if ('err' in first) {
      if (first.err instanceof AppError && first.err.code === 'service_unavailable') {
        this.suspect = true;
        log.warn(
          { err: first.err.message },
          'deflection ledger down: answers do not deflect until it is back',
        );
        return { kind: 'unanswered' };
      }
      throw first.err;
    }
    if (first.outcome.kind === 'limit_reached') this.atLimit.set(req.orgId, first.outcome.month);
    else this.atLimit.delete(req.orgId);
    return first.outcome;
  }

  /** One read at a time; answered quickly, the ledger is trusted again. */
  private probe(ledger: DeflectionLedger, req: ReserveRequest, log: Logger): void {
    if (this.probing) return;
    this.probing = true;
    const started = performance.now();
    ledger
      .used(req.orgId, monthOf(req.now))
      .then(
        () => {
          this.lastAnsweredAt = performance.now();
          const tookMs = Math.round(performance.now() - started);
          if (tookMs > this.probeMs) return;
          this.suspect = false;
          log.info({ tookMs }, 'deflection ledger answers again: answers deflect again');
        },
        () => undefined,
      )
      .finally(() => {
        this.probing = false;
      });
  }

  /** Whether the organization was last seen at its limit in the month of `now` (or later). */
  atLimitIn(orgId: string, now: Date): boolean {
    const month = this.atLimit.get(orgId);
    return month !== undefined && month >= monthOf(now);
  }
}
