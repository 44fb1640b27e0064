// A wall clock that jumps, for one process at a time: Debian's libfaketime preloaded into the
// child, its offset read from a file that the test rewrites while the process runs. The
// monotonic clock is left alone (FAKETIME_DONT_FAKE_MONOTONIC), as an NTP step or an operator's
// `date -s` leaves it.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const LIBRARIES = [
  '/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1',
  '/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1',
  '/usr/lib/faketime/libfaketimeMT.so.1',
];

/** The libfaketime library of this machine (apt package `faketime`), if installed. */
export function faketimeLibrary(): string | undefined {
  return LIBRARIES.find((p) => existsSync(p));
}

export class JumpingClock {
  private offsetSeconds = 0;

  constructor(readonly file: string) {
    this.set(0);
  }

  static in(dir: string, name: string): JumpingClock {
    return new JumpingClock(join(dir, `${name}.faketime`));
  }

  /** The environment that puts a process on this clock. */
  env(): Record<string, string> {
    const lib = faketimeLibrary();
    if (!lib) throw new Error('libfaketime is not installed (apt-get install faketime)');
    return {
      LD_PRELOAD: lib,
      FAKETIME_TIMESTAMP_FILE: this.file,
      // Read the file again at most a second after it changed.
      FAKETIME_CACHE_DURATION: '1',
      FAKETIME_DONT_FAKE_MONOTONIC: '1',
    };
  }

  /** Sets the clock `seconds` away from the real one (negative: behind). */
  set(seconds: number): void {
    this.offsetSeconds = Math.round(seconds);
    writeFileSync(this.file, `${this.offsetSeconds >= 0 ? '+' : ''}${this.offsetSeconds}\n`);
  }

  /** Moves the clock to `at` (real time now + the offset that makes it so). */
  setTo(at: Date): void {
    this.set((at.getTime() - Date.now()) / 1000);
  }

  get offset(): number {
    return this.offsetSeconds;
  }

  /**
   * Waits until the process serving `url` (an HTTP endpoint of it, e.g. its /metrics) answers
   * with a Date header on this clock. libfaketime re-reads the file only when its cache has
   * expired, in whole seconds, so a fixed sleep is a race on a busy machine.
   */
  async seenBy(url: string, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = 'no answer';
    for (;;) {
      try {
        const res = await fetch(url);
        await res.arrayBuffer();
        const date = Date.parse(res.headers.get('date') ?? '');
        const expected = Date.now() + this.offsetSeconds * 1000;
        // The Date header has whole seconds and node caches it for up to one.
        if (Math.abs(date - expected) <= 3_000) return;
        last = `Date ${res.headers.get('date')}, expected ${new Date(expected).toUTCString()}`;
      } catch (err) {
        last = (err as Error).message;
      }
      if (Date.now() > deadline) throw new Error(`${url} is not on the clock's time: ${last}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
