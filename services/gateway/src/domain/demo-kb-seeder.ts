import type { knowledge } from '@support-agent/proto';
import type { Logger } from '@support-agent/shared';
import { DEMO_KB } from './demo-kb.js';
import type { KbEntry, KbWriter } from './kb-import.js';
import type { RetryTiming } from './policy-sync.js';

/** The parts of the knowledge service the demo load uses. */
export interface DemoKbTarget extends KbWriter {
  countEntries(request: knowledge.CountEntriesRequest): Promise<knowledge.CountEntriesResponse>;
}

/** Where the seeder records that the demo KB is in place. */
export interface DemoKbRecord {
  markLoaded(note: string): void;
}

export type DemoKbOutcome = 'loaded' | 'already-populated' | 'stopped';

const DEFAULT_TIMING: RetryTiming = { minRetryMs: 1_000, maxRetryMs: 60_000 };

/**
 * Loads the demo knowledge base into the knowledge service after an embedded first start. The
 * knowledge service may come up after the gateway, so this runs in the background and retries
 * with backoff (1 s doubling to 60 s) until it succeeds or the gateway stops; it never delays
 * start-up or readiness. An organization that already has entries is left alone.
 */
export class DemoKbSeeder {
  /** Settles when the demo KB is in place, or when stopped first. */
  readonly done: Promise<DemoKbOutcome>;
  private resolveDone!: (outcome: DemoKbOutcome) => void;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private attempts = 0;

  constructor(
    private readonly knowledge: DemoKbTarget,
    private readonly record: DemoKbRecord,
    private readonly logger: Logger,
    private readonly options: {
      orgId?: string;
      entries?: readonly KbEntry[];
      timing?: RetryTiming;
    } = {},
  ) {
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
  }

  private get orgId(): string {
    return this.options.orgId ?? 'demo';
  }

  start(): void {
    void this.attempt(this.options.timing?.minRetryMs ?? DEFAULT_TIMING.minRetryMs);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.resolveDone('stopped');
  }

  private async attempt(nextDelayMs: number): Promise<void> {
    this.timer = undefined;
    if (this.stopped) return;
    this.attempts++;
    try {
      const outcome = await this.load();
      this.resolveDone(outcome);
    } catch (err) {
      if (this.stopped) return;
      const log = { orgId: this.orgId, err: (err as Error)?.message, retryInMs: nextDelayMs };
      if (this.attempts === 1) {
        this.logger.warn(log, 'knowledge service not reachable yet; loading the demo KB later');
      } else {
        this.logger.debug(log, 'demo KB load failed; retrying');
      }
      const maxMs = this.options.timing?.maxRetryMs ?? DEFAULT_TIMING.maxRetryMs;
      this.timer = setTimeout(
        () => void this.attempt(Math.min(nextDelayMs * 2, maxMs)),
        nextDelayMs,
      );
      this.timer.unref();
    }
  }

  private async load(): Promise<DemoKbOutcome> {
    const orgId = this.orgId;
    const { count } = await this.knowledge.countEntries({ orgId });
    if (count > 0) {
      this.logger.info(
        { orgId, count },
        'demo organization already has KB entries; not loading the demo KB',
      );
      this.record.markLoaded(`left alone: ${count} entries were already there`);
      return 'already-populated';
    }
    const entries = [...(this.options.entries ?? DEMO_KB)];
    const res = await this.knowledge.upsertEntries({ orgId, entries });
    if (res.failed.length > 0) {
      this.logger.warn(
        {
          orgId,
          failed: res.failed.map((f) => ({ id: entries[f.index]?.id, message: f.message })),
        },
        'the knowledge service rejected some demo KB entries',
      );
    }
    this.logger.info(
      { orgId, inserted: res.inserted, updated: res.updated, attempts: this.attempts },
      'demo knowledge base loaded',
    );
    this.record.markLoaded(`loaded ${res.inserted + res.updated} of ${entries.length} entries`);
    return 'loaded';
  }
}
