// A throwaway redis-server owned by one test (to simulate an outage without touching the
// shared test Redis). Output goes to a log file; it is stopped by its own PID only.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface PrivateRedis {
  url: string;
  kill(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => socket.write('PING\r\n'));
    socket.setTimeout(500, () => socket.destroy());
    socket.on('error', () => resolve(false));
    socket.on('close', () => resolve(false));
    socket.on('data', (d) => {
      resolve(d.toString().startsWith('+PONG'));
      socket.destroy();
    });
  });
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gw-redis-'));
  const port = await freePort();
  const fd = openSync(path.join(dir, 'redis.log'), 'a');
  let child: ChildProcess;
  try {
    child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
      ],
      { stdio: ['ignore', fd, fd] },
    );
  } finally {
    closeSync(fd);
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 10_000;
  while (!(await ping(port))) {
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`redis-server did not start (log in ${dir})`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
