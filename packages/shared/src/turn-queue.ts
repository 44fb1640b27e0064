/**
 * Runs CPU-bound tasks in arrival order, about `budgetMs` of them per turn of the event loop,
 * so that what each turn's tasks wrote is sent before the next ones run.
 *
 * Why: a service reads the frames of many gRPC calls in one socket read, and grpc-js runs all
 * their handlers before that turn ends, while `node:http2` sends what they wrote only once the
 * turn is over. Knowledge's searches take a quarter of a millisecond of CPU each, so it
 * answered 20–30 calls at once after working through all of them while its caller (the
 * gateway) waited, and then the gateway worked through the answers while knowledge waited: on
 * two cores the two processes took turns instead of overlapping, and a third of the machine
 * sat idle under full load (docs/lab/2026-11-26-knowledge-turns.md). A few
 * tasks per turn keep the writes batched; one per turn cost more CPU per call, all at once the
 * idle time (measured there).
 *
 * A task counts against its turn until it settles; one that awaits I/O (a search against
 * Qdrant) ends its turn's run, and the next task starts in the next turn whether or not it has
 * finished. With nothing waiting, a task starts at once.
 */
export class TurnQueue {
  private readonly waiting: Array<() => Promise<void>> = [];
  /** A task started in the current turn (an immediate marks the turn's end). */
  private busy = false;
  private turn = 0;
  private turnStarted = 0;

  /** `budgetMs`: how long a turn keeps starting waiting tasks (0: one task per turn). */
  constructor(private readonly budgetMs: number) {}

  start<T>(task: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const run = async () => {
        try {
          resolve(await task());
        } catch (err) {
          reject(err as Error);
        }
      };
      if (this.busy) {
        this.waiting.push(run);
        return;
      }
      this.busy = true;
      this.turnStarted = performance.now();
      setImmediate(this.nextTurn);
      this.runFrom(run, this.turn);
    });
  }

  /** Tasks waiting for a turn. */
  get backlog(): number {
    return this.waiting.length;
  }

  /** Runs `run`, then the next waiting task while the turn it started in has budget left. */
  private runFrom(run: () => Promise<void>, turn: number): void {
    void run().then(() => {
      if (turn !== this.turn || this.waiting.length === 0) return;
      if (performance.now() - this.turnStarted >= this.budgetMs) return;
      this.runFrom(this.waiting.shift()!, turn);
    });
  }

  private readonly nextTurn = (): void => {
    this.turn++;
    const run = this.waiting.shift();
    if (!run) {
      this.busy = false;
      return;
    }
    setImmediate(this.nextTurn);
    this.turnStarted = performance.now();
    this.runFrom(run, this.turn);
  };
}
