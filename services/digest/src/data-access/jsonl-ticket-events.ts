import { sleepUnlessAborted } from '@support-agent/shared';
import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname } from 'node:path';
import type { Logger } from '@support-agent/shared';
import type { DeliveryHandler, TicketEventSource } from '../domain/ports.js';

const READ_CHUNK = 1 << 20;
const OFFSET_EVERY = 100;

interface Line {
  text: string;
  /** Byte offset just after this line's newline. */
  end: number;
}

/**
 * Ticket events in embedded mode: tails DATA_DIR/events/tickets.jsonl (written by
 * the tickets service), one line at a time, with a durable byte offset of the
 * lines fully handled. After a crash the lines after the offset are handled
 * again; the store recognises them by event id, so nothing is counted twice.
 */
export class JsonlTicketEvents implements TicketEventSource {
  private stopping = false;
  private running: Promise<void> | undefined;
  private readonly wake = new AbortController();
  private offset = 0;

  constructor(
    private readonly file: string,
    private readonly offsetFile: string,
    private readonly logger: Logger,
    private readonly pollMs = 200,
  ) {}

  start(handle: DeliveryHandler): void {
    this.logger.info({ file: this.file }, 'ticket events: tailing the embedded event file');
    this.running ??= this.run(handle).catch((err: unknown) => {
      this.logger.error({ err }, 'ticket events consumer stopped unexpectedly');
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake.abort();
    await this.running;
  }

  async backlog(): Promise<number | undefined> {
    try {
      return existsSync(this.file) ? Math.max(0, statSync(this.file).size - this.offset) : 0;
    } catch {
      return undefined;
    }
  }

  private async run(handle: DeliveryHandler): Promise<void> {
    this.offset = this.readOffset();
    while (!this.stopping) {
      let lines: Line[];
      try {
        lines = this.readLines();
      } catch (err) {
        this.logger.error({ err, file: this.file }, 'reading the event file failed');
        lines = [];
      }
      if (lines.length === 0) {
        await this.sleep(this.pollMs);
        continue;
      }
      // The offset is saved every OFFSET_EVERY lines and after each batch: lines handled again
      // after a crash are recognised by event id, so this only trades a little rework for fsyncs.
      let unsaved = 0;
      for (const line of lines) {
        const done = await this.handleUntilDone(line, handle);
        if (done) {
          this.offset = line.end;
          unsaved++;
        }
        if (!done || unsaved >= OFFSET_EVERY) {
          if (unsaved > 0) this.writeOffset(this.offset);
          unsaved = 0;
        }
        if (!done) return; // stopping: the rest after the restart
      }
      if (unsaved > 0) this.writeOffset(this.offset);
    }
  }

  /** Handles one line, retrying after each failure's delay; false if stop() came first. */
  private async handleUntilDone(line: Line, handle: DeliveryHandler): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      let retryInMs: number;
      try {
        const disposition = await handle({ data: line.text, attempt });
        if (disposition.kind !== 'retry') return true;
        retryInMs = disposition.delayMs;
      } catch (err) {
        this.logger.error({ err }, 'ticket event handler threw');
        retryInMs = 1_000;
      }
      if (this.stopping) return false;
      await this.sleep(retryInMs);
      if (this.stopping) return false;
    }
  }

  /** Complete lines from the offset on; a torn last line waits for its newline. */
  private readLines(): Line[] {
    if (!existsSync(this.file)) return [];
    const fd = openSync(this.file, 'r');
    try {
      const size = fstatSync(fd).size;
      if (size < this.offset) {
        this.logger.warn(
          { file: this.file, size, offset: this.offset },
          'event file shrank; reading it again from the start',
        );
        this.offset = 0;
      }
      if (size === this.offset) return [];
      const buf = Buffer.alloc(Math.min(READ_CHUNK, size - this.offset));
      const n = readSync(fd, buf, 0, buf.length, this.offset);
      const lastNewline = buf.subarray(0, n).lastIndexOf(0x0a);
      if (lastNewline < 0) {
        if (n === READ_CHUNK)
          throw new Error(`a line longer than ${READ_CHUNK} bytes at offset ${this.offset}`);
        return [];
      }
      const lines: Line[] = [];
      let start = 0;
      while (start <= lastNewline) {
        const nl = buf.indexOf(0x0a, start);
        const text = buf.subarray(start, nl).toString('utf8').trim();
        const end = this.offset + nl + 1;
        if (text) lines.push({ text, end });
        else if (lines.length > 0) lines[lines.length - 1]!.end = end;
        else this.offset = end; // leading blank line: skip it
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
    const tmp = `${this.offsetFile}.tmp`;
    writeFileSync(tmp, JSON.stringify({ offset, file: this.file, at: new Date().toISOString() }));
    const fd = openSync(tmp, 'r+');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.offsetFile);
  }

  private sleep(ms: number): Promise<void> {
    return sleepUnlessAborted(ms, this.wake.signal);
  }
}
