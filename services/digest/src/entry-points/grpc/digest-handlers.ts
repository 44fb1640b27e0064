import {
  invalidRequest,
  requestIdOf,
  unaryHandler,
  toRfc3339,
  type Logger,
} from '@support-agent/shared';
import type { digest } from '@support-agent/proto';
import { lastCompleteWeek, requireWeekStart } from '../../domain/iso-week.js';
import type { DigestStore, StoredDigest } from '../../domain/ports.js';
import type { DigestMetrics } from '../metrics.js';

const ORG_ID_MAX = 64;

export interface DigestHandlerDeps {
  store: DigestStore;
  build: (orgId: string, weekStart: string) => Promise<StoredDigest>;
  metrics: DigestMetrics;
  logger: Logger;
  now: () => Date;
}

/** gRPC DigestService: thin mapping between proto messages and the use cases. */
export function createDigestHandlers(deps: DigestHandlerDeps): digest.DigestServiceServer {
  const { logger, metrics } = deps;
  return {
    getLatestDigest: unaryHandler<digest.GetLatestDigestRequest, digest.GetLatestDigestResponse>(
      logger,
      'GetLatestDigest',
      async (req) => {
        const latest = await deps.store.latestDigest(requireOrgId(req.orgId), !req.withoutSummary);
        return latest ? { digest: toProto(latest) } : {};
      },
    ),

    buildDigest: unaryHandler<digest.BuildDigestRequest, digest.BuildDigestResponse>(
      logger,
      'BuildDigest',
      async (req, call) => {
        const orgId = requireOrgId(req.orgId);
        const now = deps.now();
        const weekStart =
          req.weekStart === undefined || req.weekStart.trim() === ''
            ? lastCompleteWeek(now)
            : requireWeekStart(req.weekStart, now);
        try {
          const built = await deps.build(orgId, weekStart);
          metrics.inc('digest_builds_total', { trigger: 'manual' });
          logger.info(
            { requestId: requestIdOf(call), orgId, weekStart, ticketCount: built.ticketCount },
            'digest built on request',
          );
          return { digest: toProto(built) };
        } catch (err) {
          metrics.inc('digest_build_failures_total', { trigger: 'manual' });
          throw err;
        }
      },
    ),
  };
}

function requireOrgId(value: string): string {
  const orgId = value.trim();
  if (!orgId) throw invalidRequest('org_id is required', 'org_id');
  if ([...orgId].length > ORG_ID_MAX)
    throw invalidRequest(`org_id must be at most ${ORG_ID_MAX} characters`, 'org_id');
  return orgId;
}

function toProto(d: StoredDigest): digest.Digest {
  return {
    orgId: d.orgId,
    weekStart: d.weekStart,
    weekEnd: d.weekEnd,
    ticketCount: d.ticketCount,
    content: d.content,
    generatedAt: toRfc3339(d.generatedAt),
    // The stored summary has every field of the message (encode leaves out the rest).
    ...(d.summary ? { summary: d.summary } : {}),
  };
}
