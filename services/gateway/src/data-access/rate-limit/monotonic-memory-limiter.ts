import { performance } from 'node:perf_hooks';
import { RateLimiterMemory, RateLimiterRes, type IRateLimiterOptions } from 'rate-limiter-flexible';

interface Counter {
  value: number;
  /** performance.now() at which the window ends. */
  endsAt: number;
  timer: NodeJS.Timeout;
}

/**
 * rate-limiter-flexible's in-memory store with its windows on the monotonic clock
 * (performance.now()) instead of the wall clock (Date.now()): a wall-clock step (NTP, a VM
 * resumed, an operator's `date -s`) neither ends a window early (+1 h would hand a key a fresh
 * quota at once) nor stretches it (−1 h would refuse it for an hour). Same calls and results.
 */
class MonotonicMemoryStorage {
  private readonly counters = new Map<string, Counter>();

  incrby(key: string, value: number, durationSec: number): RateLimiterRes {
    const counter = this.counters.get(key);
    const left = counter ? counter.endsAt - performance.now() : 0;
    if (!counter || left <= 0) return this.set(key, value, durationSec);
    counter.value += value;
    return new RateLimiterRes(0, left, counter.value, false);
  }

  set(key: string, value: number, durationSec: number): RateLimiterRes {
    this.delete(key);
    const durationMs = durationSec * 1000;
    const timer = setTimeout(() => this.counters.delete(key), durationMs).unref();
    this.counters.set(key, { value, endsAt: performance.now() + durationMs, timer });
    return new RateLimiterRes(0, durationMs, value, true);
  }

  get(key: string): RateLimiterRes | null {
    const counter = this.counters.get(key);
    if (!counter) return null;
    return new RateLimiterRes(0, counter.endsAt - performance.now(), counter.value, false);
  }

  delete(key: string): boolean {
    const counter = this.counters.get(key);
    if (!counter) return false;
    clearTimeout(counter.timer);
    return this.counters.delete(key);
  }
}

/** RateLimiterMemory whose windows come from the monotonic clock (see MonotonicMemoryStorage). */
export class MonotonicRateLimiterMemory extends RateLimiterMemory {
  constructor(options: IRateLimiterOptions) {
    if ((options.blockDuration ?? 0) > 0 || options.execEvenly)
      throw new Error('MonotonicRateLimiterMemory supports plain fixed windows only');
    super(options);
    (this as unknown as { _memoryStorage: MonotonicMemoryStorage })._memoryStorage =
      new MonotonicMemoryStorage();
  }
}
