// The labelled set the quality scripts (fit-confidence, eval-answers) read: one command-line
// convention and one default, the StackFAQ dev split.
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadEvalCollection, type EvalCollection } from '@support-agent/quality';

/** The repository's root folder: scripts resolve their default files from it. */
export const REPO_ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/**
 * corpus, queries and qrels (JSON Lines): the first three of `positionals`, else the StackFAQ
 * dev split under STACKFAQ_DIR (default ../shared/data/stackfaq beside the repository).
 */
export function loadLabelledSet(positionals: string[]): EvalCollection & { queriesPath: string } {
  const dir = process.env.STACKFAQ_DIR ?? resolve(REPO_ROOT, '../shared/data/stackfaq');
  const [corpus, queries, qrels] =
    positionals.length >= 3
      ? positionals
      : ['corpus.jsonl', 'queries-dev.jsonl', 'qrels-dev.jsonl'].map((f) => join(dir, f));
  return { ...loadEvalCollection(corpus!, queries!, qrels!), queriesPath: queries! };
}
