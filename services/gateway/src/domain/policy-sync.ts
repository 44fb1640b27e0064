import type { Logger } from '@support-agent/shared';
import type { OrgSettings } from './model.js';
import type { GatewayStore } from './ports.js';

/** The part of the answers service that receives organization policies. */
export interface PolicyReceiver {
  setOrgPolicy(request: {
    orgId: string;
    policy: { deflectionMonthlyLimit: number; highConfidenceThreshold: number };
  }): Promise<unknown>;
}

export interface RetryTiming {
  minRetryMs: number;
  maxRetryMs: number;
}
const DEFAULT_TIMING: RetryTiming = { minRetryMs: 1_000, maxRetryMs: 60_000 };

/**
 * Keeps the answers service's copy of each organization's answer policy (deflection limit,
 * confidence threshold) in step with the settings the gateway owns, so ticket triage uses
 * them too. Settings are stored first and the push never fails an admin call: a failed push is
 * retried in the background with backoff (the latest settings win) until it lands. At start
 * every organization is pushed once.
 */
export class OrgPolicySync {
  private readonly pending = new Map<string, OrgSettings>();
  private timer: NodeJS.Timeout | undefined;
  private retryMs: number;
  private stopped = false;
  /** Logged on transitions only, so an answers outage gives one line, not one per push. */
  private delivering = true;

  constructor(
    private readonly receiver: PolicyReceiver,
    private readonly logger: Logger,
    private readonly timing: RetryTiming = DEFAULT_TIMING,
  ) {
    this.retryMs = timing.minRetryMs;
  }

  /** Pushes now; on failure queues a retry. Never throws. */
  async publish(orgId: string, settings: OrgSettings): Promise<void> {
    this.pending.delete(orgId);
    if (!(await this.push(orgId, settings))) this.enqueue(orgId, settings);
  }

  /** Pushes every organization's policy (start-up reconciliation). Never throws. */
  async publishAll(store: GatewayStore): Promise<void> {
    try {
      let reachable = true;
      for (const org of await store.listOrgs()) {
        if (this.stopped) return;
        // Once the service is found unreachable, queue the rest instead of waiting on each.
        if (reachable) reachable = await this.push(org.id, org.settings);
        if (!reachable) this.enqueue(org.id, org.settings);
      }
    } catch (err) {
      this.logger.warn({ err }, 'could not list organizations to push answer policies');
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async push(orgId: string, s: OrgSettings): Promise<boolean> {
    try {
      await this.receiver.setOrgPolicy({
        orgId,
        policy: {
          deflectionMonthlyLimit: s.deflectionMonthlyLimit,
          highConfidenceThreshold: s.highConfidenceThreshold,
        },
      });
      if (!this.delivering) this.logger.info('answer policies reach the answers service again');
      this.delivering = true;
      return true;
    } catch (err) {
      if (this.delivering) {
        this.logger.warn(
          { orgId, err: (err as Error)?.message },
          'could not push answer policies to the answers service; retrying in the background',
        );
      }
      this.delivering = false;
      return false;
    }
  }

  private enqueue(orgId: string, settings: OrgSettings): void {
    if (this.stopped) return;
    this.pending.set(orgId, settings);
    if (this.timer) return;
    this.timer = setTimeout(() => void this.retry(), this.retryMs);
    this.timer.unref();
  }

  private async retry(): Promise<void> {
    this.timer = undefined;
    const batch = [...this.pending];
    let failed = false;
    for (const [orgId, settings] of batch) {
      if (this.stopped) return;
      // A newer publish() may have replaced or delivered this entry meanwhile.
      if (this.pending.get(orgId) !== settings) continue;
      if (await this.push(orgId, settings)) {
        if (this.pending.get(orgId) === settings) this.pending.delete(orgId);
      } else {
        failed = true;
      }
    }
    this.retryMs = failed
      ? Math.min(this.retryMs * 2, this.timing.maxRetryMs)
      : this.timing.minRetryMs;
    if (this.pending.size > 0 && !this.stopped && !this.timer) {
      this.timer = setTimeout(() => void this.retry(), this.retryMs);
      this.timer.unref();
    }
  }
}
