#!/usr/bin/env node
// Re-embeds every stored entry into the collection of the current embedding
// fingerprint (provider + model + dimensions), from the source text kept with each
// entry. Uses the service's own environment (QDRANT_URL, OPENAI_*, EMBEDDINGS_*,
// DATA_DIR, EMBEDDED). With the embedded index, stop the service first.
//
//   node services/knowledge/dist/cli/reindex.js [--from <collection>]... [--drop-source] [--list]
import { parseArgs } from 'node:util';
import { createLogger, runMain } from '@support-agent/shared';
import { loadKnowledgeConfig } from '../config.js';
import { createBackend } from '../composition.js';
import { reindex } from '../domain/reindex.js';

const USAGE = `usage: reindex [--from <collection>]... [--drop-source] [--list]
  --from <collection>  read only this collection (repeatable; the current one re-embeds in place)
  --drop-source        delete each source collection after copying it
  --list               list the collections and exit`;

runMain('reindex', async () => {
  const { values } = parseArgs({
    options: {
      from: { type: 'string', multiple: true },
      'drop-source': { type: 'boolean', default: false },
      list: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const config = loadKnowledgeConfig();
  const logger = createLogger('knowledge-reindex', config.LOG_LEVEL);
  const { index, embeddings, catalog } = await createBackend(config, logger);

  const collections = await catalog.list();
  if (values.list) {
    for (const c of collections) console.log(c === index.collection ? `${c}  (current)` : c);
    return;
  }
  await index.init();
  try {
    const sources = values.from;
    const unknown = (sources ?? []).filter(
      (s) => s !== index.collection && !collections.includes(s),
    );
    if (unknown.length > 0) throw new Error(`unknown collection(s): ${unknown.join(', ')}`);
    const reports = await reindex(
      { catalog, target: index, embeddings, logger },
      { ...(sources ? { sources } : {}), dropSources: values['drop-source'] },
    );
    if (reports.length === 0)
      console.log(`nothing to re-index: ${index.collection} is the only collection`);
    for (const r of reports) {
      console.log(
        `${r.collection} → ${index.collection}: ${r.organizations} organization(s), ${r.read} entries read, ` +
          `${r.written} written, ${r.skipped} already current${r.dropped ? ', source dropped' : ''}`,
      );
    }
  } finally {
    await index.close();
  }
});
