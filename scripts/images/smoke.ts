// `npm run images:smoke`: the five images run as compose runs them (containers.ts) against
// real MariaDB, Redis and NATS started on this machine (test/support/backends.ts), on a moved
// PORT_BASE. Each check prints PASS or FAIL; the run exits 1 when any fails.
//
//   1. every container is healthy through `podman healthcheck run`, runs as uid 1000
//   2. every listener sits where PORT_BASE puts it (HTTP, admin, gRPC health, metrics)
//   3. the admin CLI in the gateway container finds the admin API through PORT_BASE
//   4. a created ticket is triaged through the events and counted by the digest
//   5. kill -9 of the tickets container under a creation load: no ticket lost or doubled,
//      the restarted container is healthy again and serves
//   6. k6 smoke.js and a 30 s load.js at 50/s against the containers (when k6 is here)
//   7. SIGTERM stops each container with exit code 0 within 10 s
//
// Builds the images first when one is missing (npm run images). Knowledge runs on its
// embedded index (DATA_DIR on the tmpfs): Qdrant cannot run here.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkHealth } from '@support-agent/shared';
import { PORT_OFFSETS, STACK_SERVICES, type StackService } from '@support-agent/shared/ports';
import {
  ensureBackendPackages,
  startBackends,
  type Backends,
} from '../../test/support/backends.js';
import { createLoadTestOrg, k6Binary, runK6 } from '../k6.js';
import { freePortBase } from '../port-base.js';
import { buildImages, printReport } from './build.js';
import {
  containerName,
  healthy,
  logs,
  processUser,
  remove,
  runHardened,
  state,
} from './containers.js';
import { ensureEnginePackages, imageExists, log, podmanOk } from './engine.js';
import { SERVICES, imageName } from './targets.js';

const ORG = 'smoke';
const ADMIN_TOKEN = randomBytes(24).toString('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A ticket as the list returns it (the fields the checks read). */
interface Ticket {
  id: number;
  category: string | null;
  ai_summary: string | null;
}

/** The JSON bodies the checks read. */
interface Body {
  ticket_id?: number;
  tickets?: Ticket[];
  next_cursor?: string | null;
}

let failures = 0;
function check(name: string, ok: boolean, detail = ''): void {
  if (!ok) failures++;
  console.log(`${ok ? 'PASS' : 'FAIL'}  ${name}${detail ? `  (${detail})` : ''}`);
}

async function waitUntil(
  what: string,
  timeoutMs: number,
  test: () => Promise<boolean> | boolean,
): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await test()) return true;
    await sleep(500);
  }
  log(`timed out waiting for ${what}`);
  return false;
}

interface Stack {
  base: number;
  api: string;
  admin: string;
  env: Record<StackService, Record<string, string>>;
}

function serviceEnv(
  base: number,
  backends: Backends,
): Record<StackService, Record<string, string>> {
  const common = { PORT_BASE: String(base), LOG_LEVEL: 'info' };
  const mysql = backends.mysql.url;
  const nats = backends.nats.url;
  const redis = backends.redis.url;
  return {
    tickets: { ...common, MYSQL_URL: mysql, REDIS_URL: redis, NATS_URL: nats },
    knowledge: { ...common, EMBEDDED: 'true', DATA_DIR: '/tmp/knowledge' },
    answers: { ...common, MYSQL_URL: mysql, NATS_URL: nats },
    digest: { ...common, MYSQL_URL: mysql, NATS_URL: nats },
    gateway: { ...common, MYSQL_URL: mysql, REDIS_URL: redis, ADMIN_TOKEN },
  };
}

/** The admin CLI inside the gateway container (ADMIN_URL unset: it follows PORT_BASE). */
function adminCli(args: string[]): string {
  return podmanOk([
    'exec',
    containerName('gateway'),
    'node',
    'dist/cli/admin.js',
    '--json',
    ...args,
  ]);
}

async function api(
  stack: Stack,
  key: string,
  method: string,
  route: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${stack.api}/api/v1/agent${route}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(15_000),
  });
  return { status: res.status, body: ((await res.json().catch(() => null)) ?? {}) as Body };
}

/** Every ticket of the organization, through the paged list. */
async function allTickets(stack: Stack, key: string): Promise<Ticket[]> {
  const tickets: Ticket[] = [];
  let cursor = '';
  for (;;) {
    const page = await api(
      stack,
      key,
      'GET',
      `/tickets?limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    if (page.status !== 200) throw new Error(`list tickets: ${page.status}`);
    tickets.push(...(page.body.tickets ?? []));
    if (!page.body.next_cursor) return tickets;
    cursor = page.body.next_cursor;
  }
}

/** Creates a ticket with `key`, retrying with the same Idempotency-Key until a 201 (or `deadline`). */
async function createWithRetries(
  stack: Stack,
  apiKey: string,
  idemKey: string,
  deadline: number,
): Promise<number | undefined> {
  while (Date.now() < deadline) {
    try {
      const res = await api(
        stack,
        apiKey,
        'POST',
        '/tickets',
        { content: `Smoke ticket ${idemKey}: how do I reset my password?`, authorName: 'smoke' },
        { 'idempotency-key': idemKey },
      );
      if (res.status === 201) return res.body.ticket_id;
    } catch {
      // connection refused or timed out: retried with the same key
    }
    await sleep(250);
  }
  return undefined;
}

/** The digest of this ISO week, built now; its ticket_count. */
function digestCount(): number {
  const now = new Date();
  const monday = new Date(
    Date.UTC(
      now.getUTCFullYear(),
      now.getUTCMonth(),
      now.getUTCDate() - ((now.getUTCDay() + 6) % 7),
    ),
  );
  const built = JSON.parse(
    adminCli(['digests', 'build', ORG, '--week-start', monday.toISOString().slice(0, 10)]),
  ) as { ticket_count: number };
  return built.ticket_count;
}

async function startStack(backends: Backends): Promise<Stack> {
  const base = await freePortBase();
  const env = serviceEnv(base, backends);
  log(
    `PORT_BASE=${base}: gateway :${base}, admin :${base + 1}, gRPC :${base + 11}–${base + 14}, metrics :${base + 21}–${base + 25}`,
  );
  for (const service of SERVICES) runHardened(service, env[service]);
  return { base, api: `http://127.0.0.1:${base}`, admin: `http://127.0.0.1:${base + 1}`, env };
}

async function checkHealthAndUsers(): Promise<void> {
  for (const service of SERVICES) {
    const name = containerName(service);
    const ok = await waitUntil(`${name} healthy`, 180_000, () => healthy(name));
    check(`${service}: healthy through podman healthcheck run`, ok, ok ? '' : logs(name, 15));
    check(
      `${service}: runs as uid 1000 (non-root)`,
      processUser(name) === '1000',
      processUser(name),
    );
  }
}

async function checkPorts(stack: Stack): Promise<void> {
  const { base } = stack;
  const healthz = await fetch(`${stack.api}/healthz`).then(
    (r) => r.status,
    () => 0,
  );
  check(`gateway public API on PORT_BASE (:${base})`, healthz === 200, `GET /healthz ${healthz}`);
  const admin = await fetch(`${stack.admin}/admin/v1/orgs`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  }).then(
    (r) => r.status,
    () => 0,
  );
  check(
    `gateway admin API on PORT_BASE+1 (:${base + 1})`,
    admin === 200,
    `GET /admin/v1/orgs ${admin}`,
  );
  for (const [i, service] of (['tickets', 'knowledge', 'answers', 'digest'] as const).entries()) {
    const port = base + 11 + i;
    check(
      `${service} gRPC health on PORT_BASE+${11 + i} (:${port})`,
      await checkHealth(`127.0.0.1:${port}`, '', 3_000),
    );
  }
  for (const [i, service] of STACK_SERVICES.entries()) {
    const port = base + PORT_OFFSETS.METRICS_PORT + i;
    const status = await fetch(`http://127.0.0.1:${port}/metrics`).then(
      (r) => r.status,
      () => 0,
    );
    check(
      `${service} metrics on PORT_BASE+${21 + i} (:${port})`,
      status === 200,
      `GET /metrics ${status}`,
    );
  }
}

/** Creates the organization and its key with the admin CLI in the container; returns the key. */
function bootstrapOrg(): string {
  const key = createLoadTestOrg(adminCli, ORG, 'Smoke test');
  check(
    'admin CLI in the gateway container reaches the admin API through PORT_BASE',
    key.startsWith('sak_'),
  );
  return key;
}

async function checkTriageAndDigest(stack: Stack, key: string): Promise<void> {
  const id = await createWithRetries(
    stack,
    key,
    `first-${randomBytes(4).toString('hex')}`,
    Date.now() + 30_000,
  );
  check('a ticket is created through the gateway and tickets', id !== undefined, `ticket ${id}`);
  const triaged = await waitUntil('triage', 60_000, async () => {
    const t = (await allTickets(stack, key)).find((x) => x.id === id);
    return !!t && t.category !== null && t.ai_summary !== null;
  });
  check('the ticket is triaged through the events (answers → tickets)', triaged);
  const counted = await waitUntil('digest count', 60_000, () => digestCount() >= 1);
  check("the ticket is counted by this week's digest", counted, `ticket_count ${digestCount()}`);
}

async function checkKillUnderLoad(stack: Stack, key: string): Promise<void> {
  const before = (await allTickets(stack, key)).length;
  const name = containerName('tickets');
  const keys: string[] = [];
  const ids = new Map<string, number | undefined>();
  const loadUntil = Date.now() + 20_000;
  let killed = false;
  const workers = Array.from({ length: 4 }, async (_, w) => {
    for (let n = 0; Date.now() < loadUntil; n++) {
      const idem = `load-${w}-${n}-${randomBytes(3).toString('hex')}`;
      keys.push(idem);
      ids.set(idem, await createWithRetries(stack, key, idem, Date.now() + 90_000));
    }
  });
  const killer = (async () => {
    await sleep(5_000);
    podmanOk(['kill', '--signal', 'KILL', name]);
    killed = true;
    log(`killed ${name} (SIGKILL) under load`);
    await sleep(3_000);
    podmanOk(['start', name]);
    log(`started ${name} again`);
  })();
  await Promise.all([...workers, killer]);
  const lost = keys.filter((k) => ids.get(k) === undefined);
  const unique = new Set([...ids.values()].filter((v) => v !== undefined));
  check(
    'kill -9 of tickets under load: every creation got its ticket (retried with its key)',
    killed && lost.length === 0,
    `${keys.length} creations, ${lost.length} without a ticket`,
  );
  check(
    'kill -9 of tickets under load: one ticket per idempotency key',
    unique.size === keys.length - lost.length,
    `${unique.size} ids for ${keys.length} keys`,
  );
  const after = (await allTickets(stack, key)).length;
  check(
    'kill -9 of tickets under load: the stored tickets are exactly those created',
    after - before === keys.length,
    `${after - before} stored, ${keys.length} created`,
  );
  const rejoined = await waitUntil('tickets healthy again', 120_000, () => healthy(name));
  check('the restarted tickets container is healthy again', rejoined);
  const fresh = await createWithRetries(
    stack,
    key,
    `after-${randomBytes(4).toString('hex')}`,
    Date.now() + 30_000,
  );
  check('the restarted tickets container serves creations', fresh !== undefined);
  const total = after + 1;
  const counted = await waitUntil('digest catches up', 120_000, () => digestCount() === total);
  check(
    "every ticket, also those created around the kill, is counted by this week's digest",
    counted,
    `digest ${digestCount()}, stored ${total}`,
  );
}

async function checkK6(stack: Stack, key: string): Promise<void> {
  const k6 = k6Binary();
  if (!k6) {
    console.log('SKIP  k6 against the containers: no k6 binary ($K6, shared/tools/k6/k6 or PATH)');
    return;
  }
  const env = { BASE_URL: stack.api, API_KEY: key };
  const echo = (line: string) => console.log(`  k6 | ${line}`);
  const smoke = await runK6(k6, 'smoke.js', env, echo);
  check(
    'k6 smoke.js against the containers: thresholds hold',
    smoke.status === 0,
    `exit ${smoke.status}`,
  );
  const load = await runK6(
    k6,
    'load.js',
    { ...env, RATE: '50', DURATION: '30s', VUS: '20', MAX_VUS: '100' },
    echo,
  );
  check(
    'k6 load.js (30 s at 50/s) against the containers: thresholds hold',
    load.status === 0,
    `exit ${load.status}`,
  );
}

function checkSigterm(): void {
  // The gateway first, as a rollout would drain it; then the services it calls.
  for (const service of [
    'gateway',
    'answers',
    'digest',
    'tickets',
    'knowledge',
  ] as StackService[]) {
    const name = containerName(service);
    const started = Date.now();
    podmanOk(['stop', '--time', '10', name], { timeout: 30_000 });
    const seconds = (Date.now() - started) / 1000;
    const { exitCode } = state(name);
    check(
      `${service}: SIGTERM stops it with exit 0 within 10 s`,
      exitCode === 0 && seconds < 10,
      `exit ${exitCode} after ${seconds.toFixed(1)} s`,
    );
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  ensureEnginePackages();
  if (!SERVICES.every((s) => imageExists(imageName(s)))) printReport(await buildImages());
  await ensureBackendPackages();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'images-smoke-'));
  const backends = await startBackends(dir);
  log(
    `backends: MariaDB :${backends.mysql.port}, Redis :${backends.redis.port}, NATS :${backends.nats.port}`,
  );
  try {
    const stack = await startStack(backends);
    await checkHealthAndUsers();
    await checkPorts(stack);
    const key = bootstrapOrg();
    await checkTriageAndDigest(stack, key);
    await checkKillUnderLoad(stack, key);
    await checkK6(stack, key);
    checkSigterm();
  } catch (err) {
    check('the smoke run completes', false, err instanceof Error ? err.message : String(err));
  } finally {
    if (failures > 0)
      for (const s of SERVICES)
        console.log(`--- ${containerName(s)} logs\n${logs(containerName(s))}`);
    for (const s of SERVICES) remove(containerName(s));
    await backends.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `images smoke: ${failures === 0 ? 'all checks passed' : `${failures} check(s) failed`} in ${((Date.now() - started) / 1000).toFixed(0)} s`,
  );
  process.exitCode = failures === 0 ? 0 : 1;
}

main().catch((err: unknown) => {
  console.error(`[images] ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
