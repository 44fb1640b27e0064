import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

type MarkerState = { state: 'pending'; at: string } | { state: 'loaded'; at: string; note: string };

/**
 * `DATA_DIR/gateway/demo-kb.json`: whether the demo organization's KB still has to be loaded
 * into the knowledge service. Written "pending" when the demo organization is created and
 * "loaded" once the knowledge service has it, so a restart in between still loads it and a
 * restart after it never loads it again (even when someone has since emptied the demo KB).
 */
export class DemoKbMarker {
  readonly path: string;

  constructor(dataDir: string) {
    this.path = path.join(dataDir, 'gateway', 'demo-kb.json');
  }

  isPending(): boolean {
    return this.read()?.state === 'pending';
  }

  markPending(): void {
    this.write({ state: 'pending', at: new Date().toISOString() });
  }

  markLoaded(note: string): void {
    this.write({ state: 'loaded', at: new Date().toISOString(), note });
  }

  private read(): MarkerState | undefined {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    try {
      return JSON.parse(text) as MarkerState;
    } catch {
      // Only this class writes the file: an unreadable one still means a demo was created.
      // Loading checks CountEntries first, so trying again never imports twice.
      return { state: 'pending', at: new Date().toISOString() };
    }
  }

  /** Replaced atomically: a crash leaves the old or the new state, never half of one. */
  private write(state: MarkerState): void {
    mkdirSync(path.dirname(this.path), { recursive: true });
    const tmp = `${this.path}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(state)}\n`);
    renameSync(tmp, this.path);
  }
}
