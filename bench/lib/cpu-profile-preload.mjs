// Preloaded into each service by the benchmarks (NODE_OPTIONS=--import …; Node 20 does not
// allow --cpu-prof in NODE_OPTIONS). Two modes, both writing into BENCH_PROFILE_DIR:
// - whole life (BENCH_CPU_PROF=1): the V8 CPU profiler runs from start to exit and writes
//   `<service>-<pid>.cpuprofile` when the process exits;
// - on signal (BENCH_PROFILE_ON_SIGNAL=1): nothing runs until SIGUSR2; the first SIGUSR2 starts
//   the profiler, the next one stops it and writes `<service>-<pid>-<n>.cpuprofile` (n counts
//   from 1), so the harness profiles one measured run and nothing else.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { basename, dirname, join } from 'node:path';

const dir = process.env.BENCH_PROFILE_DIR;
const service = basename(dirname(dirname(process.argv[1] ?? 'node/dist/x')));

/** A connected session with the profiler enabled (one sample every 500 µs). */
function profiler() {
  const session = new Session();
  session.connect();
  session.post('Profiler.setSamplingInterval', { interval: 500 });
  session.post('Profiler.enable');
  return session;
}

/** Stops the profiler and writes the profile (the in-thread session answers synchronously). */
function stopAndWrite(session, file) {
  session.post('Profiler.stop', (err, result) => {
    if (err) return;
    mkdirSync(dir, { recursive: true });
    // Written under a temporary name first: the harness waits for the final name.
    writeFileSync(`${file}.tmp`, JSON.stringify(result.profile));
    renameSync(`${file}.tmp`, file);
  });
}

if (dir && process.env.BENCH_PROFILE_ON_SIGNAL === '1') {
  let session;
  let count = 0;
  process.on('SIGUSR2', () => {
    if (!session) {
      session = profiler();
      session.post('Profiler.start');
      return;
    }
    stopAndWrite(session, join(dir, `${service}-${process.pid}-${++count}.cpuprofile`));
    session.disconnect();
    session = undefined;
  });
} else if (dir) {
  const session = profiler();
  session.post('Profiler.start');
  process.once('exit', () =>
    stopAndWrite(session, join(dir, `${service}-${process.pid}.cpuprofile`)),
  );
}
