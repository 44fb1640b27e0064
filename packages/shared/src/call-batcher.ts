import { AppError, isErrorCode, isUnimplementedCall } from './errors.js';
import type { Logger } from './logger.js';

/**
 * One failed item of a batch call, as the batch RPCs' result messages carry it
 * (knowledge.SearchBatchResult, tickets.ApplyTriageBatchResult): empty `errorCode` when the
 * item succeeded.
 */
export interface BatchItemError {
  errorCode: string;
  errorMessage: string;
  errorParam: string;
  errorRetryAfter: number;
}

export const NO_BATCH_ERROR: BatchItemError = {
  errorCode: '',
  errorMessage: '',
  errorParam: '',
  errorRetryAfter: 0,
};

/**
 * A batch item's error as the single call would have returned it: anything untrusted as
 * internal_error, and (given `log`) logged as unaryHandler logs a failed call's bug.
 */
export function toBatchItemError(
  err: unknown,
  log?: { logger: Logger; method: string },
): BatchItemError {
  if (log && !(err instanceof AppError && err.isTrusted))
    log.logger.error({ err, method: log.method }, 'grpc handler failed');
  const e =
    err instanceof AppError && err.isTrusted
      ? err
      : new AppError('internal_error', 'internal error');
  return {
    errorCode: e.code,
    errorMessage: e.message,
    errorParam: e.param ?? '',
    errorRetryAfter: e.retryAfter ?? 0,
  };
}

/**
 * The server side of a batch call: runs every item at once (started together, they share what
 * the single calls would share, such as tickets' transactions) and settles each on its own,
 * as its value or as the error the single call would have returned (logged as a bug when
 * untrusted), so one failing item never fails the others.
 */
export async function settleEach<Item, Res>(
  items: Item[],
  log: { logger: Logger; method: string },
  run: (item: Item, index: number) => Promise<Res>,
): Promise<({ value: Res } | { error: BatchItemError })[]> {
  const settled = await Promise.allSettled(items.map(run));
  return settled.map((s) =>
    s.status === 'fulfilled' ? { value: s.value } : { error: toBatchItemError(s.reason, log) },
  );
}

/** The AppError a failed batch item stands for, as the single call would have thrown it. */
export function fromBatchItemError(e: BatchItemError): AppError {
  if (!isErrorCode(e.errorCode)) return new AppError('internal_error', 'internal error');
  return new AppError(e.errorCode, e.errorMessage || e.errorCode, {
    ...(e.errorParam ? { param: e.errorParam } : {}),
    ...(e.errorRetryAfter > 0 ? { retryAfter: e.errorRetryAfter } : {}),
  });
}

interface Pending<Req, Res> {
  request: Req;
  timeoutMs: number;
  resolve: (res: Res) => void;
  reject: (err: unknown) => void;
}

/**
 * Calls asked in the same turn of the event loop, sent together: a client's calls that a
 * batch of work starts at once (answers' triage of a batch of tickets) leave as one batch call
 * of at most `max` requests, so grpc-js's per-call work on both sides is paid once per batch
 * instead of once per item (docs/performance.md). A call asked alone goes as the single call;
 * `max` 1 sends every call on its own. Each caller settles with its own result or error; a
 * batch call that fails as a whole fails each of its callers with that error, except on a
 * server without the batch RPC, whose callers are sent the single calls.
 */
export class CallBatcher<Req, Res> {
  private pending: Pending<Req, Res>[] = [];

  constructor(
    private readonly max: number,
    private readonly one: (request: Req, timeoutMs: number) => Promise<Res>,
    /** One result per request, in order: the item's result or the error it failed with. */
    private readonly many: (requests: Req[], timeoutMs: number) => Promise<(Res | AppError)[]>,
  ) {}

  call(request: Req, timeoutMs: number): Promise<Res> {
    if (this.max <= 1) return this.one(request, timeoutMs);
    return new Promise((resolve, reject) => {
      this.pending.push({ request, timeoutMs, resolve, reject });
      // setImmediate runs after the microtasks of this turn: every call the batch of work
      // asks before it next waits for I/O is in.
      if (this.pending.length === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const waiting = this.pending;
    this.pending = [];
    for (let i = 0; i < waiting.length; i += this.max) {
      const batch = waiting.slice(i, i + this.max);
      if (batch.length === 1) {
        const [p] = batch as [Pending<Req, Res>];
        this.one(p.request, p.timeoutMs).then(p.resolve, p.reject);
      } else {
        void this.send(batch);
      }
    }
  }

  private async send(batch: Pending<Req, Res>[]): Promise<void> {
    try {
      // The batch waits no longer than its most impatient caller.
      const timeoutMs = Math.min(...batch.map((p) => p.timeoutMs));
      const results = await this.many(
        batch.map((p) => p.request),
        timeoutMs,
      );
      if (results.length !== batch.length)
        throw new AppError('internal_error', 'a batch call answered out of shape');
      batch.forEach((p, i) => {
        const r = results[i]!;
        if (r instanceof AppError) p.reject(r);
        else p.resolve(r);
      });
    } catch (err) {
      // A server that predates the batch RPC (an older version during a rolling deploy) has
      // no handler for it: its callers get the single calls instead.
      if (isUnimplementedCall(err)) {
        for (const p of batch) this.one(p.request, p.timeoutMs).then(p.resolve, p.reject);
        return;
      }
      for (const p of batch) p.reject(err);
    }
  }
}
