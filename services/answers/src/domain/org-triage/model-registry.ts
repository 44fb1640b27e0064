// Which model classifies each organization's tickets on this replica: the active version of
// every organization that activated one, loaded from the store and refreshed on a timer, so an
// activation anywhere reaches every replica within one refresh (TRIAGE_MODEL_REFRESH_MS).
import type { Logger } from '@support-agent/shared';
import type { TriageModel } from '../classifier.js';
import { loadOrgModel, type OrgModel } from './org-model.js';
import type { TriageStore } from './ports.js';

export interface ActiveModel {
  version: number;
  model: OrgModel;
}

export class OrgModelRegistry {
  private active = new Map<string, ActiveModel>();
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;

  constructor(
    private readonly store: TriageStore,
    private readonly builtin: TriageModel,
    private readonly logger: Logger,
  ) {}

  /** The organization's active model; undefined: the built-in classifier. */
  get(orgId: string): ActiveModel | undefined {
    return this.active.get(orgId);
  }

  /** Loads what changed since the last refresh (one refresh at a time). */
  refresh(): Promise<void> {
    this.refreshing ??= this.load().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async load(): Promise<void> {
    const versions = await this.store.activeVersions();
    const next = new Map<string, ActiveModel>();
    for (const [orgId, version] of versions) {
      const current = this.active.get(orgId);
      if (current?.version === version) {
        next.set(orgId, current);
        continue;
      }
      try {
        const file = await this.store.model(orgId, version);
        if (file === undefined) throw new Error('the model file is missing');
        next.set(orgId, { version, model: loadOrgModel(JSON.parse(file), this.builtin) });
        this.logger.info({ orgId, version }, 'organization triage model loaded');
      } catch (err) {
        // Keep what classified so far (or the built-in one) rather than fail triage.
        if (current) next.set(orgId, current);
        this.logger.error(
          { orgId, version, err: (err as Error).message },
          'organization triage model cannot be loaded',
        );
      }
    }
    this.active = next;
  }

  /** Refreshes every `intervalMs` until stop(). */
  start(intervalMs: number): void {
    this.timer = setInterval(() => {
      this.refresh().catch((err: unknown) =>
        this.logger.warn({ err: (err as Error).message }, 'triage models: refresh failed'),
      );
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.refreshing?.catch(() => undefined);
  }
}
