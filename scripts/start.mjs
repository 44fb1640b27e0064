#!/usr/bin/env node
// `npm start`: runs every built service as its own process (they talk gRPC on
// loopback), with embedded adapters for any backend whose URL is unset
// (DESIGN.md §6). Children that crash are restarted with backoff; SIGINT/SIGTERM
// stop them in reverse start order so the gateway drains first.
//
// PORT_BASE=B moves every listener of the stack together (packages/shared/src/ports.ts): gateway
// B and admin B+1, gRPC B+11..B+14, metrics B+21..B+25; explicit variables still win.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { portBaseDefaults, STACK_SERVICES } from '@support-agent/shared/ports';

const root = resolve(new URL('..', import.meta.url).pathname);

// Every tenant's data and the signing secrets live under DATA_DIR: whatever the services write
// there is owner-only (0600 files, 0700 folders). Children inherit the umask; each service also
// makes DATA_DIR 0700 and tightens what it already holds (shared service-main.ts).
process.umask(0o077);

// Start order: upstreams first, the gateway last (it reports ready only when tickets is).
const SERVICES = STACK_SERVICES;

let layout;
try {
  layout = Object.fromEntries(SERVICES.map((name) => [name, portBaseDefaults(process.env, name)]));
} catch (err) {
  console.error(`[start] PORT_BASE ${err.message}`);
  process.exit(2);
}
const fromBase = layout.gateway;

const env = {
  ...process.env,
  EMBEDDED: 'true',
  DATA_DIR: resolve(process.env.DATA_DIR ?? './data'),
  TICKETS_ADDR: process.env.TICKETS_ADDR || fromBase.TICKETS_ADDR || '127.0.0.1:50051',
  KNOWLEDGE_ADDR: process.env.KNOWLEDGE_ADDR || fromBase.KNOWLEDGE_ADDR || '127.0.0.1:50052',
  ANSWERS_ADDR: process.env.ANSWERS_ADDR || fromBase.ANSWERS_ADDR || '127.0.0.1:50053',
  DIGEST_ADDR: process.env.DIGEST_ADDR || fromBase.DIGEST_ADDR || '127.0.0.1:50054',
};

// Every service serves Prometheus metrics on METRICS_PORT (9464 in each container). Here all
// share one machine, so each gets its own: with PORT_BASE, the layout's port (B+21..B+25);
// otherwise METRICS_PORT (default 9464) + its index in SERVICES (tickets 9464, knowledge 9465,
// answers 9466, digest 9467, gateway 9468). METRICS_PORT=0 turns them all off.
const explicitMetrics = process.env.METRICS_PORT || undefined;
const metricsBase = Number(explicitMetrics ?? 9464);
const metricsOff = explicitMetrics !== undefined && metricsBase === 0;
const metricsPort = (name) => {
  if (metricsOff) return '0';
  if (explicitMetrics === undefined && layout[name].METRICS_PORT) return layout[name].METRICS_PORT;
  return String(metricsBase + SERVICES.indexOf(name));
};

const children = new Map();
let stopping = false;

function launch(name, attempt = 0) {
  const entry = resolve(root, 'services', name, 'dist/main.js');
  const child = spawn(process.execPath, [entry], {
    env: { ...env, METRICS_PORT: metricsPort(name) },
    stdio: 'inherit',
  });
  const startedAt = Date.now();
  children.set(name, child);
  child.on('exit', (code, signal) => {
    children.delete(name);
    if (stopping) return;
    // A child that ran for a while gets a fresh backoff; a crash loop backs off up to 30 s.
    const next = Date.now() - startedAt > 60_000 ? 0 : attempt + 1;
    const delay = Math.min(30_000, 500 * 2 ** next);
    console.error(`[start] ${name} exited (${signal ?? code}); restarting in ${delay} ms`);
    setTimeout(() => !stopping && launch(name, next), delay);
  });
}

const available = SERVICES.filter((name) =>
  existsSync(resolve(root, 'services', name, 'dist/main.js')),
);
const backends = ['MYSQL_URL', 'REDIS_URL', 'NATS_URL', 'QDRANT_URL'].filter((k) => process.env[k]);
console.error(
  `[start] services: ${available.join(', ')}; data: ${env.DATA_DIR}; ` +
    `backends: ${backends.length ? backends.join(', ') : 'embedded'}; metrics: ` +
    (metricsOff ? 'off' : available.map((name) => `${name} :${metricsPort(name)}`).join(', ')),
);
for (const name of available) launch(name);

async function stopAll(signal) {
  if (stopping) return;
  stopping = true;
  for (const name of [...available].reverse()) {
    const child = children.get(name);
    if (!child) continue;
    await new Promise((done) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.once('exit', () => {
        clearTimeout(timer);
        done();
      });
      child.kill('SIGTERM');
    });
  }
  console.error(`[start] stopped (${signal})`);
  process.exit(0);
}
process.on('SIGINT', () => void stopAll('SIGINT'));
process.on('SIGTERM', () => void stopAll('SIGTERM'));
