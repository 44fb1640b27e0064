// How much of what a Node process allocates survives V8's young-generation collections
// (scavenges), for the transports the gateway uses: an HTTP/1.1 server (the public API) and
// an HTTP/2 client (grpc-js, to the services), and an HTTP/2 server (the services' side).
// Each measured side runs in a child process under --trace-gc-nvp, the other side here, at a
// fixed request rate with a 2,220-byte response (a search result's size), no application code.
// Survivors are what a scavenge copies, so they set its pause; what survives twice is promoted
// and left to the next full collection.
//   npx tsx bench/gc-survival.ts [seconds=20] [rate=200]
import http from 'node:http';
import http2 from 'node:http2';
import { ScriptProcess } from './lib/baselines.js';

const seconds = Number(process.argv[2] ?? 20);
const rate = Number(process.argv[3] ?? 200);
const BODY = 2220;

/** The measured side, in its own process; it prints its port (0 for the client) on a line of its own. */
const SCRIPTS = {
  'http/1.1 server': `
    const body = Buffer.alloc(${BODY}, 120);
    const s = require('node:http').createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
      res.end(body);
    });
    s.listen(0, '127.0.0.1', () => console.log(s.address().port));`,
  'http/2 server': `
    const body = Buffer.alloc(${BODY}, 120);
    const s = require('node:http2').createServer();
    s.on('stream', (st) => { st.resume(); st.on('end', () => { st.respond({ ':status': 200 }); st.end(body); }); });
    s.listen(0, '127.0.0.1', () => console.log(s.address().port));`,
  'http/2 client': `
    const c = require('node:http2').connect('http://127.0.0.1:' + process.env.PEER_PORT);
    console.log(0);
    setInterval(() => {
      const r = c.request({ ':method': 'POST', ':path': '/x' });
      r.resume();
      r.end(Buffer.from('q'));
    }, ${1000 / rate});`,
} as const;

interface Scavenge {
  pause: number;
  allocated: number;
  survived: number;
}

async function measure(name: keyof typeof SCRIPTS): Promise<void> {
  // The client's peer: the same HTTP/2 server, unmeasured, in a process of its own.
  const peer =
    name === 'http/2 client' ? await ScriptProcess.start(SCRIPTS['http/2 server'], {}) : undefined;
  const scavenges: Scavenge[] = [];
  const measured = await ScriptProcess.start(
    SCRIPTS[name],
    peer ? { PEER_PORT: String(peer.port) } : {},
    {
      nodeArgs: ['--trace-gc', '--trace-gc-nvp'],
      onLine: (line) => {
        if (!line.includes(' gc=s ')) return;
        const num = (k: string) => Number(new RegExp(`\\b${k}=([0-9.]+)`).exec(line)?.[1] ?? NaN);
        scavenges.push({
          pause: num('pause'),
          allocated: num('allocated'),
          survived: num('new_space_survived'),
        });
      },
    },
  );
  const port = measured.port;
  const stopAt = Date.now() + seconds * 1000;
  if (name === 'http/2 client') {
    await new Promise((r) => setTimeout(r, seconds * 1000));
  } else {
    const agent = new http.Agent({ keepAlive: true });
    const session =
      name === 'http/2 server' ? http2.connect(`http://127.0.0.1:${port}`) : undefined;
    while (Date.now() < stopAt) {
      if (session) {
        const r = session.request({ ':method': 'POST', ':path': '/x' });
        r.resume();
        r.end(Buffer.from('q'));
      } else {
        http.get({ host: '127.0.0.1', port, agent }, (res) => res.resume());
      }
      await new Promise((r) => setTimeout(r, 1000 / rate));
    }
    session?.close();
    agent.destroy();
  }
  await measured.stop();
  await peer?.stop();
  // The first collections belong to start-up.
  const steady = scavenges.slice(Math.min(3, Math.floor(scavenges.length / 2)));
  const sum = (f: (s: Scavenge) => number) => steady.reduce((a, s) => a + f(s), 0);
  const allocated = sum((s) => s.allocated);
  console.log(
    `${name.padEnd(16)} ${String(steady.length).padStart(4)} scavenges  mean pause ${(sum((s) => s.pause) / Math.max(1, steady.length)).toFixed(2)} ms  survived ${((100 * sum((s) => s.survived)) / Math.max(1, allocated)).toFixed(1)} % of ${(allocated / 1e6).toFixed(0)} MB allocated`,
  );
}

console.log(`${rate} requests/s for ${seconds} s per side, response ${BODY} B`);
for (const name of Object.keys(SCRIPTS) as (keyof typeof SCRIPTS)[]) await measure(name);
