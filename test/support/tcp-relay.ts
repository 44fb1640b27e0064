// A TCP relay for the network-fault suite: accepts on one address and forwards every
// connection to a target, optionally holding each chunk `delayMs` in each direction (a slow
// link; this kernel has no netem), or every chunk until `silent` is lifted (a blackhole that
// TCP's retransmissions cross once it ends). Used in-process and, as a script, inside the suite's
// network namespace:
//
//   node --import tsx test/support/tcp-relay.ts <listenHost> <targetHost>:<port>…
//
// prints one line "ready <listenPort>…" (one port per target, in order) once listening, and
// exits when stdin closes.
import net from 'node:net';
import { pathToFileURL } from 'node:url';

export interface Relay {
  readonly port: number;
  /** Added to every chunk in each direction, from now on. */
  delayMs: number;
  /** While true, nothing crosses in either direction; lifted, what was held goes on in order. */
  silent: boolean;
  close(): Promise<void>;
}

export async function startRelay(
  listenHost: string,
  targetHost: string,
  targetPort: number,
): Promise<Relay> {
  const sockets = new Set<net.Socket>();
  let silent = false;
  const held: (() => void)[] = [];
  const relay = {
    port: 0,
    delayMs: 0,
    get silent() {
      return silent;
    },
    set silent(value: boolean) {
      silent = value;
      if (!value) for (const fn of held.splice(0)) fn();
    },
    close,
  };
  /** Forwards from → to, each chunk after the relay's delay, in order. */
  const pipe = (from: net.Socket, to: net.Socket) => {
    let lastDue = 0;
    const later = (fn: () => void): void => {
      if (silent) {
        held.push(() => later(fn));
        return;
      }
      if (relay.delayMs <= 0 && lastDue <= Date.now()) return fn();
      const due = Math.max(Date.now() + relay.delayMs, lastDue);
      lastDue = due;
      setTimeout(fn, due - Date.now());
    };
    from.on('data', (chunk) => later(() => to.destroyed || to.write(chunk)));
    from.on('end', () => later(() => to.end()));
    from.on('error', () => later(() => to.destroy()));
    from.on('close', () => later(() => to.destroy()));
  };
  const server = net.createServer({ noDelay: true }, (client) => {
    const upstream = net.connect({ host: targetHost, port: targetPort, noDelay: true });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    }
    pipe(client, upstream);
    pipe(upstream, client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, listenHost, () => resolve());
  });
  relay.port = (server.address() as net.AddressInfo).port;
  function close(): Promise<void> {
    for (const s of sockets) s.destroy();
    return new Promise((resolve) => server.close(() => resolve()));
  }
  return relay;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [listenHost, ...targets] = process.argv.slice(2);
  const relays = await Promise.all(
    targets.map((t) => {
      const i = t.lastIndexOf(':');
      return startRelay(listenHost!, t.slice(0, i), Number(t.slice(i + 1)));
    }),
  );
  process.stdout.write(`ready ${relays.map((r) => r.port).join(' ')}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
}
