import { gauge, withTimeout } from '@support-agent/shared';
import type { Express, RequestHandler } from 'express';
import { methodNotAllowed } from './errors.js';

/** A named dependency check; resolves when reachable, rejects or times out otherwise. */
export interface ReadinessCheck {
  name: string;
  check(): Promise<void>;
}

const CHECK_TIMEOUT_MS = 2_000;
const LATE = `no answer within ${CHECK_TIMEOUT_MS} ms`;

const dependencyUp = gauge(
  'gateway_dependency_up',
  "1 when the gateway's last readiness check of the dependency passed, else 0 (store, redis, tickets).",
  ['dependency'],
);

/** What the readiness checks found: every check's `ok` or `failed: <reason>`. */
export interface ReadinessReport {
  ready: boolean;
  shuttingDown: boolean;
  checks: Record<string, string>;
}

/**
 * The gateway's readiness: every dependency answers (each within 2 s) and shutdown has not
 * begun. Each run sets `gateway_dependency_up`. The reasons (addresses, dependency errors) are
 * for operators only: the public /readyz says ready or not, the admin listener says why.
 */
export class Readiness {
  constructor(
    private readonly checks: readonly ReadinessCheck[],
    private readonly shuttingDown: () => boolean,
  ) {
    for (const c of checks) dependencyUp.set({ dependency: c.name }, 0);
  }

  async report(): Promise<ReadinessReport> {
    const results = await Promise.all(
      this.checks.map(async (c) => {
        try {
          await withTimeout(c.check(), CHECK_TIMEOUT_MS, () => new Error(LATE));
          dependencyUp.set({ dependency: c.name }, 1);
          return [c.name, 'ok'] as const;
        } catch (err) {
          dependencyUp.set({ dependency: c.name }, 0);
          return [c.name, `failed: ${(err as Error)?.message ?? String(err)}`] as const;
        }
      }),
    );
    const shuttingDown = this.shuttingDown();
    return {
      ready: !shuttingDown && results.every(([, r]) => r === 'ok'),
      shuttingDown,
      checks: Object.fromEntries(results),
    };
  }

  /** `GET /admin/v1/readyz` (behind the admin token): the report, 503 when not ready. */
  detailed(): RequestHandler {
    return async (_req, res) => {
      const report = await this.report();
      const failed = Object.entries(report.checks)
        .filter(([, r]) => r !== 'ok')
        .map(([name]) => name);
      const body = {
        status: report.ready ? 'ready' : report.shuttingDown ? 'shutting_down' : 'not_ready',
        checks: report.checks,
      };
      if (report.ready) {
        res.json(body);
        return;
      }
      res.set('Retry-After', '1');
      res.status(503).json({
        ...body,
        error: {
          message: report.shuttingDown
            ? 'shutting down'
            : `not ready: ${failed.join(', ')} unreachable`,
          code: 'service_unavailable',
        },
      });
    };
  }
}

/**
 * /healthz: the process is alive. /readyz: `{"status":"ready"}`, or 503 `{"status":"not_ready"}`
 * when a dependency does not answer or shutdown began (so load balancers stop sending traffic).
 * Unauthenticated, so it names nothing: which dependency failed and why is on the admin
 * listener (`GET /admin/v1/readyz`) and in the `gateway_dependency_up` gauge.
 */
export function mountHealth(app: Express, readiness: Readiness): void {
  app
    .route('/healthz')
    .get((_req, res) => {
      res.json({ status: 'ok' });
    })
    .all(methodNotAllowed(['GET', 'HEAD']));

  app
    .route('/readyz')
    .get(async (_req, res) => {
      if ((await readiness.report()).ready) {
        res.json({ status: 'ready' });
        return;
      }
      res.set('Retry-After', '1');
      res.status(503).json({
        status: 'not_ready',
        error: { message: 'not ready', code: 'service_unavailable' },
      });
    })
    .all(methodNotAllowed(['GET', 'HEAD']));
}
