// Writes grouped into shared transactions: calls made in the same turn of the event loop, and
// calls that arrive while earlier ones are being committed, wait and then go together, in one
// transaction (one query write, one commit, one fsync for many). Under load a transaction
// carries many writes; alone, a write waits one turn of the event loop, never a round trip.
// Updates (batched-updates.ts) and creates (batched-creates.ts) each have a queue of their own.

/** What a shared transaction reports for one request: its outcome, or the error that is its alone. */
export type SharedResult<Out> = { outcome: Out } | { error: unknown };

interface Queued<Req, Out> {
  request: Req;
  resolve: (outcome: Out) => void;
  reject: (err: unknown) => void;
}

/**
 * Runs requests through `commit` (one transaction per batch): the requests of one turn of the
 * event loop start together, at most `parallel` batches in flight; what arrives meanwhile waits
 * and becomes the next batch (up to `maxBatch`). `commit` answers each request in order; if it
 * throws, every request of the batch gets that error.
 */
export class SharedTransactions<Req, Out> {
  private queue: Array<Queued<Req, Out>> = [];
  private inFlight = 0;

  constructor(
    private readonly commit: (requests: Req[]) => Promise<Array<SharedResult<Out>>>,
    private readonly maxBatch = 100,
    private readonly parallel = 2,
  ) {}

  submit(request: Req): Promise<Out> {
    return new Promise((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      // Not at once: the calls of this turn of the event loop (an ApplyTriageBatch's results,
      // creates read from one socket read) go together instead of the first two alone. A queue
      // already holding calls has a start scheduled, or both slots busy (a finished batch
      // pumps), as CallBatcher schedules its flush.
      if (this.queue.length === 1) setImmediate(() => this.pump());
    });
  }

  private pump(): void {
    while (this.inFlight < this.parallel && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.inFlight++;
      void this.run(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async run(batch: Array<Queued<Req, Out>>): Promise<void> {
    try {
      const results = await this.commit(batch.map((q) => q.request));
      batch.forEach((q, i) => {
        const r = results[i]!;
        if ('outcome' in r) q.resolve(r.outcome);
        else q.reject(r.error);
      });
    } catch (err) {
      for (const q of batch) q.reject(err);
    }
  }
}
