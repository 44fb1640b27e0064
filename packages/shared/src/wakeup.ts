/**
 * Wakes everyone waiting on it, for loops that sleep until there is work. Resolving a promise
 * is all a wake-up costs: an AbortController-driven sleep makes an AbortError (a DOMException
 * with its stack) in abort() and another error in the timer's rejection on every wake-up,
 * which a loop woken by every write (the outbox relay) paid thousands of times a second.
 */
export class Wakeup {
  private waiters: Array<() => void> = [];

  /** Resolves at the next wakeAll(). */
  wait(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Resolves at the next wakeAll() or after `ms`, whichever comes first (the timer cleared). */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        // After a wakeAll() the waiters are a new list without it (never the one being woken).
        const at = this.waiters.indexOf(done);
        if (at >= 0) this.waiters.splice(at, 1);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.push(done);
    });
  }

  /** True while someone waits. */
  get waiting(): boolean {
    return this.waiters.length > 0;
  }

  wakeAll(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}
