// Preloaded into each service by bench/run.ts when BENCH_CPU_PROF=1 (NODE_OPTIONS=--import …;
// Node 20 does not allow --cpu-prof in NODE_OPTIONS): starts the V8 CPU profiler and writes
// `<BENCH_PROFILE_DIR>/<service>-<pid>.cpuprofile` when the process exits.
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { basename, dirname, join } from 'node:path';

const dir = process.env.BENCH_PROFILE_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  session.post('Profiler.setSamplingInterval', { interval: 500 });
  session.post('Profiler.enable');
  session.post('Profiler.start');
  const service = basename(dirname(dirname(process.argv[1] ?? 'node/dist/x')));
  process.once('exit', () => {
    // The in-thread session answers synchronously, so this works inside an exit handler.
    session.post('Profiler.stop', (err, result) => {
      if (err) return;
      mkdirSync(dir, { recursive: true });
      writeFileSync(
        join(dir, `${service}-${process.pid}.cpuprofile`),
        JSON.stringify(result.profile),
      );
    });
  });
}
