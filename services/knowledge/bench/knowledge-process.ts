// Starts one build's knowledge service as its own process, as `npm run bench` does (embedded
// index under `dir`, the built-in embeddings, metrics on, LOG_LEVEL info), for the benchmarks
// that load or measure the process itself (grpc-ab.ts, import-rss.ts).
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '../../../test/support/backends.js';

export async function spawnKnowledge(
  root: string,
  dir: string,
  env: Record<string, string>,
  stdio: StdioOptions,
): Promise<{ child: ChildProcess; address: string }> {
  const address = `127.0.0.1:${await freePort()}`;
  const child = spawn(process.execPath, [join(root, 'services/knowledge/dist/main.js')], {
    env: {
      ...process.env,
      EMBEDDED: 'true',
      DATA_DIR: dir,
      KNOWLEDGE_ADDR: address,
      METRICS_PORT: String(await freePort()),
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio,
  });
  return { child, address };
}
