/** Thrown without calling through while the breaker is open. */
export class CircuitOpenError extends Error {
  constructor(readonly retryInMs: number) {
    super(`circuit open for another ${retryInMs} ms`);
    this.name = 'CircuitOpenError';
  }
}

/**
 * A consecutive-failure circuit breaker: after `failureThreshold` failures in a
 * row it opens for `openMs` and fails fast; then one trial call is let through
 * (half-open), whose success closes it and whose failure opens it again.
 */
export class CircuitBreaker {
  private failures = 0;
  private openUntil = 0;
  private trialInFlight = false;

  constructor(
    private readonly failureThreshold: number,
    private readonly openMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get state(): 'closed' | 'open' | 'half_open' {
    if (this.openUntil === 0) return 'closed';
    return this.now() < this.openUntil ? 'open' : 'half_open';
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    const state = this.state;
    if (state === 'open') throw new CircuitOpenError(this.openUntil - this.now());
    const trial = state === 'half_open';
    if (trial) {
      if (this.trialInFlight) throw new CircuitOpenError(0);
      this.trialInFlight = true;
    }
    try {
      const result = await fn();
      this.failures = 0;
      this.openUntil = 0;
      return result;
    } catch (err) {
      this.failures++;
      if (trial || this.failures >= this.failureThreshold)
        this.openUntil = this.now() + this.openMs;
      throw err;
    } finally {
      if (trial) this.trialInFlight = false;
    }
  }
}
