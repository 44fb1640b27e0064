import { sleepUnlessAborted } from '@support-agent/shared';
import {
  closeSync,
  existsSync,
  fstatSync,
  statSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  writeFileSync,
} from 'node:fs';
import { dirname } from 'node:path';
import type { Logger } from '@support-agent/shared';
import type { Disposition, EventDelivery, TicketEventSource } from '../domain/ports.js';

export interface JsonlTailOptions {
  /** Events handled at the same time (one batch). */
  concurrency: number;
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
 * Ticket events in embedded mode: tails the JSONL file the tickets service
 * appends to (DATA_DIR/events/tickets.jsonl), keeping a durable byte offset of
 * the lines fully handled. Lines are handled in batches of `concurrency`; a
 * batch's failures are retried with their delay until handled, and the offset
 * only moves past a line once it and every line before it are done. After a
 * crash the lines after the offset are handled again, which the ledger and
 * ApplyTriage absorb (both idempotent by event id).
 */
export class JsonlTicketEvents implements TicketEventSource {
  private stopping = false;
  private running: Promise<void> | undefined;
  private readonly wake = new AbortController();
  /** The durable offset, for backlog(). */
  private handled = 0;

  constructor(
    private readonly file: string,
    private readonly offsetFile: string,
    private readonly logger: Logger,
    private readonly options: JsonlTailOptions,
  ) {}

  start(handle: (delivery: EventDelivery) => Promise<Disposition>): void {
    this.logger.info({ file: this.file }, 'triage consumer: tailing the embedded event file');
    this.running ??= this.run(handle).catch((err: unknown) => {
      this.logger.error({ err }, 'triage consumer stopped unexpectedly');
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

  private async run(handle: (delivery: EventDelivery) => Promise<Disposition>): Promise<void> {
    let offset = this.readOffset();
    this.handled = offset;
    while (!this.stopping) {
      let lines: Line[];
      try {
        ({ lines, offset } = this.readLines(offset));
      } catch (err) {
        this.logger.error({ err, file: this.file }, 'reading the event file failed');
        lines = [];
      }
      if (lines.length === 0) {
        await this.sleep(this.options.pollMs ?? 200);
        continue;
      }
      for (let i = 0; i < lines.length && !this.stopping; i += this.options.concurrency) {
        const batch = lines.slice(i, i + this.options.concurrency);
        const done = await Promise.all(batch.map((line) => this.handleUntilDone(line, handle)));
        const firstPending = done.indexOf(false);
        const completed = firstPending < 0 ? batch : batch.slice(0, firstPending);
        const last = completed[completed.length - 1];
        if (last) {
          offset = last.end;
          this.writeOffset(offset);
        }
        if (firstPending >= 0) return; // stopping: the rest is handled after the restart
      }
    }
  }

  /** Handles one line, retrying after each failure's delay; false if stop() came first. */
  private async handleUntilDone(
    line: Line,
    handle: (delivery: EventDelivery) => Promise<Disposition>,
  ): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      let disposition: Disposition;
      try {
        disposition = await handle({ data: line.text, attempt });
      } catch (err) {
        this.logger.error({ err }, 'triage handler threw');
        disposition = { kind: 'retry', delayMs: 5_000 };
      }
      if (disposition.kind !== 'retry') return true;
      if (this.stopping) return false;
      await this.sleep(disposition.delayMs);
      if (this.stopping) return false;
    }
  }

  /** Complete lines from `offset` on; a torn last line waits for its newline. */
  private readLines(offset: number): { lines: Line[]; offset: number } {
    if (!existsSync(this.file)) return { lines: [], offset };
    const fd = openSync(this.file, 'r');
    try {
      const size = fstatSync(fd).size;
      if (size < offset) {
        this.logger.warn(
          { file: this.file, size, offset },
          'event file shrank; reading it again from the start',
        );
        offset = 0;
        this.writeOffset(0);
      }
      if (size === offset) return { lines: [], offset };
      const buf = Buffer.alloc(Math.min(READ_CHUNK, size - offset));
      const n = readSync(fd, buf, 0, buf.length, offset);
      const lastNewline = buf.subarray(0, n).lastIndexOf(0x0a);
      if (lastNewline < 0) {
        if (n === READ_CHUNK)
          throw new Error(`a line longer than ${READ_CHUNK} bytes at offset ${offset}`);
        return { lines: [], offset };
      }
      const lines: Line[] = [];
      let start = 0;
      while (start <= lastNewline) {
        const nl = buf.indexOf(0x0a, start);
        const text = buf.subarray(start, nl).toString('utf8').trim();
        if (text) lines.push({ text, end: offset + nl + 1 });
        else if (lines.length === 0) offset = offset + nl + 1;
        else lines[lines.length - 1]!.end = offset + nl + 1;
        start = nl + 1;
      }
      return { lines, offset };
    } finally {
      closeSync(fd);
    }
  }

  private readOffset(): number {
    try {
      const value = Number(JSON.parse(readFileSync(this.offsetFile, 'utf8')).offset);
      return Number.isSafeInteger(value) && value >= 0 ? value : 0;
    } catch {
      return 0;
    }
  }

  /** Written to a temporary file, fsynced and renamed, so a crash leaves the old or the new offset. */
  private writeOffset(offset: number): void {
    mkdirSync(dirname(this.offsetFile), { recursive: true });
    const tmp = `${this.offsetFile}.tmp`;
    writeFileSync(tmp, JSON.stringify({ offset, file: this.file, at: new Date().toISOString() }));
    const fd = openSync(tmp, 'r+');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.offsetFile);
    this.handled = offset;
  }

  private sleep(ms: number): Promise<void> {
    return sleepUnlessAborted(ms, this.wake.signal);
  }
}
