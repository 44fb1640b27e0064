// Network faults between the processes of a test stack, made with the kernel's own tools inside
// a network namespace the suite creates (root only; nothing outside the namespace changes but
// one veth pair, removed with it):
//
//   service ──tcp──▶ [namespace] relay ──tcp──▶ host relay ──▶ 127.0.0.1:target
//                    10.x.y.2:Q               10.x.y.1:R
//
// Every link crosses the veth pair twice, so an nftables `drop` of the link's ports inside the
// namespace is a blackhole: no RST, no ICMP, established connections and new SYNs alike go
// silent, both ways. heal() removes the drop (TCP retransmits then succeed). delay() holds each
// chunk in the host relay (this kernel has no netem), in both directions.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { startRelay, type Relay } from './tcp-relay.js';

const run = promisify(execFile);
const ROOT = resolve(new URL('../..', import.meta.url).pathname);

export interface Link {
  /** host:port the service is given instead of the target's. */
  readonly addr: string;
  readonly nsPort: number;
  readonly hostRelay: Relay;
}

export class FaultNet {
  readonly links = new Map<string, Link>();
  private readonly relayProcs: ChildProcess[] = [];

  private constructor(
    readonly ns: string,
    private readonly hostIf: string,
    readonly hostIp: string,
    readonly nsIp: string,
  ) {}

  /** True when this process may create namespaces and nftables rules. */
  static available(): boolean {
    return process.getuid?.() === 0;
  }

  /** A namespace with one link per target (`name` → host:port on this host); addLinks() for more. */
  static async create(targets: Record<string, string>): Promise<FaultNet> {
    const id = `${process.pid % 100_000}${randomInt(10)}`;
    const [a, b] = [randomInt(200, 250), randomInt(0, 64) * 4];
    const net = new FaultNet(`n2f${id}`, `n2h${id}`, `10.${a}.${b}.1`, `10.${a}.${b}.2`);
    try {
      await net.setUp();
      await net.addLinks(targets);
      return net;
    } catch (err) {
      await net.close();
      throw err;
    }
  }

  private async setUp(): Promise<void> {
    const nsIf = `n2n${this.hostIf.slice(3)}`;
    const inNs = (...args: string[]) => run('ip', ['netns', 'exec', this.ns, ...args]);
    await run('ip', ['netns', 'add', this.ns]);
    await run('ip', ['link', 'add', this.hostIf, 'type', 'veth', 'peer', 'name', nsIf]);
    await run('ip', ['link', 'set', nsIf, 'netns', this.ns]);
    await run('ip', ['addr', 'add', `${this.hostIp}/30`, 'dev', this.hostIf]);
    await run('ip', ['link', 'set', this.hostIf, 'up']);
    await inNs('ip', 'addr', 'add', `${this.nsIp}/30`, 'dev', nsIf);
    await inNs('ip', 'link', 'set', nsIf, 'up');
    await inNs('ip', 'link', 'set', 'lo', 'up');
    await this.nft(`
      table inet fault {
        set listen { type inet_service; }
        set upstream { type inet_service; }
        chain in {
          type filter hook input priority 0;
          tcp dport @listen drop
          tcp sport @upstream drop
        }
        chain out {
          type filter hook output priority 0;
          tcp sport @listen drop
          tcp dport @upstream drop
        }
      }`);
  }

  /** One link per target (`name` → host:port on this host); returns name → link address. */
  async addLinks(targets: Record<string, string>): Promise<Record<string, string>> {
    const names = Object.keys(targets);
    const hostRelays = await Promise.all(
      names.map((n) => {
        const t = targets[n]!;
        const i = t.lastIndexOf(':');
        return startRelay(this.hostIp, t.slice(0, i), Number(t.slice(i + 1)));
      }),
    );
    const proc = spawn(
      'ip',
      [
        'netns',
        'exec',
        this.ns,
        process.execPath,
        '--import',
        'tsx',
        'test/support/tcp-relay.ts',
        this.nsIp,
        ...hostRelays.map((r) => `${this.hostIp}:${r.port}`),
      ],
      { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] },
    );
    this.relayProcs.push(proc);
    const ports = await new Promise<number[]>((ok, fail) => {
      const timer = setTimeout(() => fail(new Error('namespace relay did not start')), 30_000);
      proc.once('exit', (code) => fail(new Error(`namespace relay exited with ${code}`)));
      createInterface({ input: proc.stdout! }).once('line', (line) => {
        clearTimeout(timer);
        ok(line.split(' ').slice(1).map(Number));
      });
    });
    names.forEach((n, i) => {
      this.links.set(n, {
        addr: `${this.nsIp}:${ports[i]}`,
        nsPort: ports[i]!,
        hostRelay: hostRelays[i]!,
      });
    });
    return Object.fromEntries(names.map((n, i) => [n, `${this.nsIp}:${ports[i]}`]));
  }

  link(name: string): Link {
    const l = this.links.get(name);
    if (!l) throw new Error(`no link ${name}`);
    return l;
  }

  /** Every packet of the link dropped, both ways, from now on. */
  async blackhole(name: string): Promise<void> {
    const l = this.link(name);
    await this.nft(
      `add element inet fault listen { ${l.nsPort} }\nadd element inet fault upstream { ${l.hostRelay.port} }`,
    );
  }

  async heal(name: string): Promise<void> {
    const l = this.link(name);
    await this.nft(
      `delete element inet fault listen { ${l.nsPort} }\ndelete element inet fault upstream { ${l.hostRelay.port} }`,
    );
  }

  /** Each chunk of the link held `ms` in each direction (0: none). */
  delay(name: string, ms: number): void {
    this.link(name).hostRelay.delayMs = ms;
  }

  async close(): Promise<void> {
    for (const p of this.relayProcs) {
      p.stdin?.end();
      p.kill('SIGKILL');
    }
    await Promise.all([...this.links.values()].map((l) => l.hostRelay.close()));
    await run('ip', ['netns', 'del', this.ns]).catch(() => undefined);
    await run('ip', ['link', 'del', this.hostIf]).catch(() => undefined);
  }

  private async nft(script: string): Promise<void> {
    await new Promise<void>((ok, fail) => {
      const p = spawn('ip', ['netns', 'exec', this.ns, 'nft', '-f', '-'], {
        stdio: ['pipe', 'ignore', 'pipe'],
      });
      let err = '';
      p.stderr!.on('data', (d) => (err += d));
      p.on('exit', (code) => (code === 0 ? ok() : fail(new Error(`nft: ${err}`))));
      p.stdin!.end(script);
    });
  }
}
