// The embedded twin of the durable consumer: tails the event file the embedded publisher
// appends to, with the same handler port, validation and stop behaviour.
import {
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  statSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { sleepUnlessAborted, writeFileAtomic, type Logger } from '@support-agent/shared';
import type { DurableConsumer } from './contract.js';
import {
  dispatchBatch,
  eachOf,
  type BatchDeliveryHandler,
  type DeliveryHandler,
  type DispatchContext,
  type InvalidEventHook,
  type TicketEventSource,
} from './delivery.js';

export interface FileConsumerOptions {
  /** Its name (logs, metrics) and subject filter; redelivery is unlimited, as a retry is. */
  consumer: DurableConsumer;
  /** Lines handled at the same time by start()'s handler (one batch). */
  concurrency: number;
  /** Most lines one call of startBatches()'s handler gets. Default: concurrency. */
  batchSize?: number;
  /**
   * Handled lines between two saves of the offset (also saved after each read and at stop).
   * Lines after the saved offset are handled again after a crash: a trade of rework for fsyncs.
   */
  saveEvery?: number;
  /** How often the file is checked for new lines. */
  pollMs?: number;
}

const READ_CHUNK = 1 << 20;

interface Line {
  text: string;
  /** Byte offset just after this line's newline. */
  end: number;
}

/**
 * Ticket events in embedded mode: tails the JSONL event file, keeping a durable byte offset
 * of the lines fully handled. Lines are handled in batches of `concurrency`; a line whose
 * handler asks for a retry is retried after its delay until handled, and the offset only
 * moves past a line once it and every line before it are done. After a crash the lines after
 * the offset are handled again, which the handlers absorb (idempotent by event id).
 */
export class FileTicketConsumer implements TicketEventSource {
  private stopping = false;
  private running: Promise<void> | undefined;
  private readonly wake = new AbortController();
  /** Byte offset of the lines handled (saved or not). */
  private handled = 0;

  constructor(
    private readonly file: string,
    private readonly offsetFile: string,
    private readonly logger: Logger,
    private readonly options: FileConsumerOptions,
  ) {}

  start(handle: DeliveryHandler, onInvalid?: InvalidEventHook): void {
    this.begin(eachOf(handle), this.options.concurrency, onInvalid);
  }

  startBatches(handle: BatchDeliveryHandler, onInvalid?: InvalidEventHook): void {
    this.begin(handle, this.options.batchSize ?? this.options.concurrency, onInvalid);
  }

  private begin(
    handle: BatchDeliveryHandler,
    batchSize: number,
    onInvalid: InvalidEventHook | undefined,
  ): void {
    const name = this.options.consumer.name;
    this.logger.info({ file: this.file, consumer: name }, 'ticket events: tailing the event file');
    this.running ??= this.run(handle, Math.max(1, batchSize), onInvalid).catch((err: unknown) => {
      this.logger.error({ err, consumer: name }, 'ticket events consumer stopped unexpectedly');
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake.abort();
    await this.running;
  }

  /** Bytes of the event file not handled yet. */
  async backlog(): Promise<number | undefined> {
    try {
      return existsSync(this.file) ? Math.max(0, statSync(this.file).size - this.handled) : 0;
    } catch {
      return undefined;
    }
  }

  private async run(
    handle: BatchDeliveryHandler,
    batchSize: number,
    onInvalid: InvalidEventHook | undefined,
  ): Promise<void> {
    const { saveEvery = 1 } = this.options;
    const context: DispatchContext = {
      consumer: this.options.consumer.name,
      logger: this.logger,
      onInvalid,
      accepts: (subject: string) => subjectMatches(this.options.consumer.filterSubject, subject),
    };
    this.handled = this.readOffset();
    while (!this.stopping) {
      let lines: Line[];
      try {
        lines = this.readLines();
      } catch (err) {
        this.logger.error({ err, file: this.file }, 'reading the event file failed');
        lines = [];
      }
      if (lines.length === 0) {
        await this.sleep(this.options.pollMs ?? 200);
        continue;
      }
      let unsaved = 0;
      for (let i = 0; i < lines.length && !this.stopping; i += batchSize) {
        const batch = lines.slice(i, i + batchSize);
        const done = await this.handleUntilDone(batch, handle, context);
        const firstPending = done.indexOf(false);
        const completed = firstPending < 0 ? batch : batch.slice(0, firstPending);
        if (completed.length > 0) {
          this.handled = completed[completed.length - 1]!.end;
          unsaved += completed.length;
        }
        if (firstPending >= 0 || unsaved >= saveEvery) {
          if (unsaved > 0) this.writeOffset(this.handled);
          unsaved = 0;
        }
        if (firstPending >= 0) return; // stopping: the rest is handled after the restart
      }
      if (unsaved > 0) this.writeOffset(this.handled);
    }
  }

  /**
   * Handles a batch of lines, handing each one whose handler asked for a retry over again once
   * its delay has passed (those due at the same time together), until all are done; per line,
   * false if stop() came first.
   */
  private async handleUntilDone(
    lines: Line[],
    handle: BatchDeliveryHandler,
    context: DispatchContext,
  ): Promise<boolean[]> {
    const done = lines.map(() => false);
    const attempts = lines.map(() => 1);
    /** Line index → when it is handed over again. */
    const due = new Map<number, number>(lines.map((_, i) => [i, 0]));
    while (due.size > 0) {
      const next = Math.min(...due.values());
      if (next > Date.now()) await this.sleep(next - Date.now());
      if (this.stopping) return done;
      const now = Date.now();
      const ready = [...due.keys()].filter((i) => due.get(i)! <= now);
      const dispositions = await dispatchBatch(
        ready.map((i) => ({ body: lines[i]!.text, attempt: attempts[i]! })),
        handle,
        context,
      );
      ready.forEach((i, k) => {
        const d = dispositions[k]!;
        if (d.kind === 'retry') {
          attempts[i]!++;
          due.set(i, Date.now() + d.delayMs);
        } else {
          done[i] = true;
          due.delete(i);
        }
      });
    }
    return done;
  }

  /** Complete lines after the handled offset; a torn last line waits for its newline. */
  private readLines(): Line[] {
    if (!existsSync(this.file)) return [];
    const fd = openSync(this.file, 'r');
    try {
      const size = fstatSync(fd).size;
      if (size < this.handled) {
        this.logger.warn(
          { file: this.file, size, offset: this.handled },
          'event file shrank; reading it again from the start',
        );
        this.writeOffset(0);
      }
      if (size === this.handled) return [];
      const buf = Buffer.alloc(Math.min(READ_CHUNK, size - this.handled));
      const n = readSync(fd, buf, 0, buf.length, this.handled);
      const lastNewline = buf.subarray(0, n).lastIndexOf(0x0a);
      if (lastNewline < 0) {
        if (n === READ_CHUNK)
          throw new Error(`a line longer than ${READ_CHUNK} bytes at offset ${this.handled}`);
        return [];
      }
      const lines: Line[] = [];
      let start = 0;
      while (start <= lastNewline) {
        const nl = buf.indexOf(0x0a, start);
        const text = buf.subarray(start, nl).toString('utf8').trim();
        const end = this.handled + nl + 1;
        if (text) lines.push({ text, end });
        else if (lines.length > 0) lines[lines.length - 1]!.end = end;
        else this.handled = end; // a leading blank line: skip it
        start = nl + 1;
      }
      return lines;
    } finally {
      closeSync(fd);
    }
  }

  private readOffset(): number {
    try {
      const value = Number(
        (JSON.parse(readFileSync(this.offsetFile, 'utf8')) as { offset?: unknown }).offset,
      );
      return Number.isSafeInteger(value) && value >= 0 ? value : 0;
    } catch {
      return 0;
    }
  }

  /** Temporary file, fsync, rename: a crash leaves the old or the new offset. */
  private writeOffset(offset: number): void {
    mkdirSync(dirname(this.offsetFile), { recursive: true });
    writeFileAtomic(
      this.offsetFile,
      JSON.stringify({ offset, file: this.file, at: new Date().toISOString() }),
    );
    this.handled = offset;
  }

  private sleep(ms: number): Promise<void> {
    return sleepUnlessAborted(ms, this.wake.signal);
  }
}

/** NATS subject matching: `*` is one token, a final `>` one or more. */
export function subjectMatches(filter: string, subject: string): boolean {
  const f = filter.split('.');
  const s = subject.split('.');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '>') return s.length > i;
    if (i >= s.length || (f[i] !== '*' && f[i] !== s[i])) return false;
  }
  return f.length === s.length;
}
