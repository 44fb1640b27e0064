#!/usr/bin/env node
// Rebuilds the digest aggregates from scratch:
//
//   node services/digest/dist/cli/backfill.js --from-stream
//       replays the ticket events stream from sequence 1 (NATS_URL), or DATA_DIR/events/tickets.jsonl
//       when embedded (EMBEDDED=true without NATS_URL)
//   node services/digest/dist/cli/backfill.js --from-mysql <tickets MYSQL_URL>
//       reads the tickets service's `tickets` table
//
// The aggregates go to MYSQL_URL (or, with EMBEDDED=true, to DATA_DIR/digest, which needs the
// embedded service stopped). Digests are not touched; rebuild them with BuildDigest.
import { parseArgs } from 'node:util';
import { createLogger, redactUrl, runMain } from '@support-agent/shared';
import { loadDigestConfig } from '../config.js';
import { rebuildFromEvents, rebuildFromSnapshots } from '../domain/backfill.js';
import { eventFilePath, replayEventFile, replayTicketStream } from '@support-agent/events';
import { readTicketsTable } from '../data-access/backfill-sources.js';
import { openRepository } from '../server.js';

const USAGE = 'usage: backfill.js --from-stream | --from-mysql <tickets MYSQL_URL>';

runMain('digest-backfill', async () => {
  const { values } = parseArgs({
    options: {
      'from-stream': { type: 'boolean' },
      'from-mysql': { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const fromStream = values['from-stream'] === true;
  const ticketsUrl = values['from-mysql'];
  if (fromStream === (ticketsUrl !== undefined)) throw new Error(USAGE);

  // NATS is only needed to replay the stream; a placeholder keeps the service schema happy otherwise.
  const env = { ...process.env };
  if (!fromStream && !env.NATS_URL && env.EMBEDDED !== 'true') env.NATS_URL = 'nats://unused:4222';
  const config = loadDigestConfig(env);
  const logger = createLogger('digest-backfill', config.LOG_LEVEL);
  const repo = await openRepository(config, logger);
  try {
    const started = Date.now();
    let report: Record<string, unknown>;
    if (fromStream) {
      const source = config.NATS_URL
        ? replayTicketStream(config.NATS_URL)
        : replayEventFile(eventFilePath(config.DATA_DIR));
      logger.info(
        { source: config.NATS_URL ? redactUrl(config.NATS_URL) : 'events/tickets.jsonl' },
        'replaying ticket events',
      );
      report = { ...(await rebuildFromEvents(repo, source, logger)) };
    } else {
      logger.info({ tickets: redactUrl(ticketsUrl!) }, 'reading the tickets table');
      report = { ...(await rebuildFromSnapshots(repo, readTicketsTable(ticketsUrl!), logger)) };
    }
    const weeks = await repo.weekCounts();
    const summary = {
      mode: fromStream ? 'from-stream' : 'from-mysql',
      ...report,
      weeks: weeks.length,
      tickets: weeks.reduce((n, w) => n + w.ticketCount, 0),
      ms: Date.now() - started,
    };
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } finally {
    await repo.close();
  }
});
