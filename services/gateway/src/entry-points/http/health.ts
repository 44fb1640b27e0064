import { withTimeout } from '@support-agent/shared';
import type { Express } from 'express';
import { methodNotAllowed } from './errors.js';

/** A named dependency check; resolves when reachable, rejects or times out otherwise. */
export interface ReadinessCheck {
  name: string;
  check(): Promise<void>;
}

const CHECK_TIMEOUT_MS = 2_000;
const LATE = `no answer within ${CHECK_TIMEOUT_MS} ms`;

/**
 * /healthz: the process is alive. /readyz: every dependency answers; 503 naming the failed
 * checks, and 503 from the moment shutdown begins so load balancers stop sending traffic.
 */
export function mountHealth(
  app: Express,
  checks: ReadinessCheck[],
  shuttingDown: () => boolean,
): void {
  app
    .route('/healthz')
    .get((_req, res) => {
      res.json({ status: 'ok' });
    })
    .all(methodNotAllowed(['GET', 'HEAD']));

  app
    .route('/readyz')
    .get(async (_req, res) => {
      if (shuttingDown()) {
        res.status(503).json({
          status: 'shutting_down',
          error: { message: 'shutting down', code: 'service_unavailable' },
        });
        return;
      }
      const results = await Promise.all(
        checks.map(async (c) => {
          try {
            await withTimeout(c.check(), CHECK_TIMEOUT_MS, () => new Error(LATE));
            return [c.name, 'ok'] as const;
          } catch (err) {
            return [c.name, `failed: ${(err as Error)?.message ?? String(err)}`] as const;
          }
        }),
      );
      const failed = results.filter(([, r]) => r !== 'ok').map(([name]) => name);
      const body = {
        status: failed.length === 0 ? 'ok' : 'unavailable',
        checks: Object.fromEntries(results),
      };
      if (failed.length === 0) {
        res.json(body);
        return;
      }
      res.set('Retry-After', '1');
      res.status(503).json({
        ...body,
        error: {
          message: `not ready: ${failed.join(', ')} unreachable`,
          code: 'service_unavailable',
        },
      });
    })
    .all(methodNotAllowed(['GET', 'HEAD']));
}
