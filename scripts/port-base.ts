// A PORT_BASE for a throwaway stack (npm start or the image smoke): away from the default
// ports, its whole layout (packages/shared/src/ports.ts) free on loopback now.
import net from 'node:net';
import { PORT_OFFSETS, STACK_SERVICES } from '@support-agent/shared/ports';

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Every port of the layout of `base`. */
export function portLayout(base: number): number[] {
  const offsets = [
    PORT_OFFSETS.PORT,
    PORT_OFFSETS.ADMIN_PORT,
    PORT_OFFSETS.TICKETS_ADDR,
    PORT_OFFSETS.KNOWLEDGE_ADDR,
    PORT_OFFSETS.ANSWERS_ADDR,
    PORT_OFFSETS.DIGEST_ADDR,
    ...STACK_SERVICES.map((_, i) => PORT_OFFSETS.METRICS_PORT + i),
  ];
  return offsets.map((o) => base + o);
}

/** A free PORT_BASE from `from` to `to` (multiples of 100). */
export async function freePortBase(from = 30_000, to = 60_000): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = from + 100 * Math.floor((Math.random() * (to - from)) / 100);
    const free = await Promise.all(portLayout(base).map(portFree));
    if (free.every(Boolean)) return base;
  }
  throw new Error('no PORT_BASE with a free layout found');
}
