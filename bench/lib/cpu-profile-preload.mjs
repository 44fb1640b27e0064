// Preloaded into each service by bench/run.ts (NODE_OPTIONS=--import …; Node 20 does not allow
// --cpu-prof in NODE_OPTIONS). With BENCH_CPU_PROF=1 it profiles the whole process and writes
// `<BENCH_PROFILE_DIR>/<service>-<pid>.cpuprofile` when the process exits. With
// BENCH_PROFILE_WINDOWS=1 the profiler stays off until the harness sends SIGUSR2, and the next
// SIGUSR2 writes what was sampled in between to `<service>-<pid>-window-<n>.cpuprofile`: a
// profile of one measured run only, at no cost to the others.
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { basename, dirname, join } from 'node:path';

const dir = process.env.BENCH_PROFILE_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  session.post('Profiler.setSamplingInterval', { interval: 500 });
  session.post('Profiler.enable');
  const service = basename(dirname(dirname(process.argv[1] ?? 'node/dist/x')));
  // The in-thread session answers synchronously, so this works inside an exit handler too.
  const stopInto = (file) =>
    session.post('Profiler.stop', (err, result) => {
      if (err) return;
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, file), JSON.stringify(result.profile));
    });
  if (process.env.BENCH_PROFILE_WINDOWS === '1') {
    let window = 0;
    let recording = false;
    process.on('SIGUSR2', () => {
      if (recording) stopInto(`${service}-${process.pid}-window-${++window}.cpuprofile`);
      else session.post('Profiler.start');
      recording = !recording;
    });
  } else {
    session.post('Profiler.start');
    process.once('exit', () => stopInto(`${service}-${process.pid}.cpuprofile`));
  }
}
