/** Resolves on a later turn of the event loop, after pending I/O callbacks (setImmediate). */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Cuts long synchronous work (a bulk import's embedding and indexing) into slices of about
 * `budgetMs`: call `next()` between items, and once the slice's time is spent it yields to the
 * event loop, so requests of other callers (another organization's searches) are served in
 * between instead of waiting for the whole batch.
 */
export class TimeSlicer {
  private sliceStart = performance.now();

  constructor(private readonly budgetMs = 5) {}

  /** Yields when the current slice has used its budget; otherwise resolves at once. */
  next(): Promise<void> | undefined {
    if (performance.now() - this.sliceStart < this.budgetMs) return undefined;
    return yieldToEventLoop().then(() => {
      this.sliceStart = performance.now();
    });
  }
}
