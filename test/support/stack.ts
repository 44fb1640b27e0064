import { appendFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { checkHealth } from '@support-agent/shared';
import { freePort, startNats, type NatsHandle } from './backends.js';
import { createTestDatabase, requireEnv } from './mysql.js';
import { ServiceProcess } from './process.js';
import { leakedSecrets } from './secrets.js';

export { freePort };

const ROOT = resolve(new URL('../..', import.meta.url).pathname);

export interface StackOptions {
  /** Directory for logs and embedded data. */
  dir: string;
  /** Real backends; omitted ones use embedded adapters (EMBEDDED=true). */
  mysqlUrl?: string;
  redisUrl?: string;
  natsUrl?: string;
  gateways?: number;
  /**
   * Processes of each upstream service (default 1). With more, each listens on its own
   * address and every caller's `*_ADDR` lists them all (`ip:port,ip:port`).
   */
  replicasPerService?: number;
  /** Upstream services to run (default: every one that is built). */
  services?: string[];
  env?: Record<string, string>;
  /** More environment for the gateways only, from the upstreams' addresses (…_ADDR). */
  gatewayEnv?: (addresses: Record<string, string>) => Promise<Record<string, string>>;
}

/** What Stack.onTestBackends creates for a stack, and its stop() removes. */
interface OwnedBackends {
  db: { url: string; drop(): Promise<void> };
  nats: NatsHandle | undefined;
}

export interface TestBackendsOptions extends Omit<StackOptions, 'dir' | 'mysqlUrl' | 'natsUrl'> {
  /** `own` (default): a NATS server of the suite's own, which it may stop; `shared`: TEST_NATS_URL. */
  nats?: 'own' | 'shared';
}

/** The gateway + tickets topology as separate processes talking gRPC on loopback. */
export class Stack {
  /**
   * A started stack on backends of its own: a fresh database on the test MariaDB, the test
   * Redis (unless `redisUrl` says otherwise) and NATS, its files in a new temporary folder
   * named after `name`. stop() stops and removes them with it (the folder stays with
   * KEEP_TEST_TMP=1).
   */
  static async onTestBackends(name: string, options: TestBackendsOptions = {}): Promise<Stack> {
    const dir = mkdtempSync(join(tmpdir(), `${name}-`));
    const db = await createTestDatabase(name.replaceAll('-', '_'));
    const nats = options.nats === 'shared' ? undefined : await startNats(join(dir, 'nats'));
    const stack = new Stack({
      dir,
      mysqlUrl: db.url,
      redisUrl: requireEnv('TEST_REDIS_URL'),
      natsUrl: nats?.url ?? requireEnv('TEST_NATS_URL'),
      ...options,
    });
    stack.owned = { db, nats };
    try {
      return await stack.start();
    } catch (err) {
      await stack.stop();
      throw err;
    }
  }

  private owned: OwnedBackends | undefined;

  readonly adminToken = randomBytes(24).toString('hex');
  readonly upstreams = new Map<string, ServiceProcess>();
  /** Extra replicas of upstream services started with addReplica(). */
  readonly replicas: ServiceProcess[] = [];
  readonly addresses: Record<string, string> = {};
  /** The gRPC address each upstream process listens on. */
  readonly listenAddresses = new Map<ServiceProcess, string>();
  /** METRICS_PORT given to each process, by process name (tickets, …, gateway-0, tickets-2). */
  readonly metricsPorts = new Map<string, number>();
  gateways: ServiceProcess[] = [];
  private gatewayPorts: number[] = [];
  private adminPorts: number[] = [];

  constructor(readonly options: StackOptions) {}

  get embedded(): boolean {
    return !this.options.mysqlUrl;
  }

  baseUrl(i = 0): string {
    return `http://127.0.0.1:${this.gatewayPorts[i]}`;
  }

  adminUrl(i = 0): string {
    return `http://127.0.0.1:${this.adminPorts[i]}`;
  }

  /** The Prometheus endpoint of a process (tickets, knowledge, answers, digest, gateway-0, …). */
  metricsUrl(name: string): string {
    const port = this.metricsPorts.get(name);
    if (port === undefined) throw new Error(`no metrics port for ${name}`);
    return `http://127.0.0.1:${port}/metrics`;
  }

  /** A free METRICS_PORT for process `name`, so processes on one machine never collide. */
  private async metricsEnv(name: string): Promise<Record<string, string>> {
    const port = await freePort();
    this.metricsPorts.set(name, port);
    return { METRICS_PORT: String(port) };
  }

  private backendEnv(): Record<string, string> {
    const env: Record<string, string> = {
      DATA_DIR: join(this.options.dir, 'data'),
      // As under `npm start`: a backend whose URL is unset uses its embedded adapter.
      EMBEDDED: 'true',
    };
    if (this.options.mysqlUrl) env.MYSQL_URL = this.options.mysqlUrl;
    if (this.options.redisUrl) env.REDIS_URL = this.options.redisUrl;
    if (this.options.natsUrl) env.NATS_URL = this.options.natsUrl;
    return { ...env, ...this.addresses, ...this.options.env };
  }

  /**
   * Starts every process and waits until each is ready. A start that fails stops what it had
   * started, so a suite whose before() failed does not hang on live child processes.
   */
  async start(): Promise<this> {
    try {
      await this.launch();
      return this;
    } catch (err) {
      await this.stop().catch(() => undefined);
      throw err;
    }
  }

  private async launch(): Promise<void> {
    const logDir = join(this.options.dir, 'logs');
    const names = (this.options.services ?? UPSTREAMS).filter((name) =>
      existsSync(join(ROOT, 'services', name, 'dist/main.js')),
    );
    const count = this.options.replicasPerService ?? 1;
    const listen = new Map<string, string[]>();
    for (const name of UPSTREAMS) {
      const own: string[] = [];
      for (let r = 0; r < count; r++) own.push(`127.0.0.1:${await freePort()}`);
      listen.set(name, own);
      this.addresses[`${name.toUpperCase()}_ADDR`] = own.join(',');
    }
    const started: ServiceProcess[] = [];
    for (const name of names) {
      for (let r = 0; r < count; r++) {
        const procName = r === 0 ? name : `${name}-${r + 1}`;
        const address = listen.get(name)![r]!;
        const proc = new ServiceProcess(
          procName,
          name,
          {
            ...(await this.metricsEnv(procName)),
            ...this.backendEnv(),
            [`${name.toUpperCase()}_ADDR`]: address,
          },
          logDir,
        );
        if (r === 0) this.upstreams.set(name, proc);
        else this.replicas.push(proc);
        this.listenAddresses.set(proc, address);
        started.push(proc);
        proc.start();
      }
    }
    await Promise.all(started.map((proc) => this.waitForProcess(proc)));
    const gatewayEnv = (await this.options.gatewayEnv?.({ ...this.addresses })) ?? {};
    for (let i = 0; i < (this.options.gateways ?? 1); i++) {
      const port = await freePort();
      const adminPort = await freePort();
      this.gatewayPorts.push(port);
      this.adminPorts.push(adminPort);
      const gw = new ServiceProcess(
        `gateway-${i}`,
        'gateway',
        {
          ...(await this.metricsEnv(`gateway-${i}`)),
          // Every test client is 127.0.0.1 and the failed-auth counter lives in the shared
          // Redis: without this, bad keys sent by earlier suites would throttle later ones.
          // Suites that test the throttle set their own value through `env`.
          AUTH_FAILURES_PER_MIN_PER_IP: '100000',
          // Overridable through `env` (an empty value leaves it unset: derived per request).
          PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
          ...this.backendEnv(),
          ...gatewayEnv,
          PORT: String(port),
          HOST: '127.0.0.1',
          ADMIN_PORT: String(adminPort),
          ADMIN_TOKEN: this.adminToken,
        },
        logDir,
      );
      this.gateways.push(gw);
      gw.start();
    }
    await Promise.all(this.gateways.map((_, i) => this.waitForGateway(i)));
  }

  /** The process of an upstream service (tickets, knowledge, answers, digest). */
  service(name: string): ServiceProcess {
    const proc = this.upstreams.get(name);
    if (!proc) throw new Error(`service ${name} is not part of this stack`);
    return proc;
  }

  get tickets(): ServiceProcess {
    return this.service('tickets');
  }

  get ticketsAddr(): string {
    return this.addresses.TICKETS_ADDR!;
  }

  async waitForService(name: string, timeoutMs = 30_000): Promise<void> {
    await waitFor(
      () => checkHealth(this.addresses[`${name.toUpperCase()}_ADDR`]!),
      timeoutMs,
      () => `${name} not healthy:\n${tail(this.service(name).logs())}`,
    );
  }

  /** Waits until one upstream process (a replica among several) serves on its own address. */
  async waitForProcess(proc: ServiceProcess, timeoutMs = 30_000): Promise<void> {
    const address = this.listenAddresses.get(proc);
    if (address === undefined) throw new Error(`${proc.name} is not an upstream process`);
    await waitFor(
      () => checkHealth(address),
      timeoutMs,
      () => `${proc.name} not healthy:\n${tail(proc.logs())}`,
    );
  }

  async waitForTickets(timeoutMs = 30_000): Promise<void> {
    await this.waitForService('tickets', timeoutMs);
  }

  async restartService(name: string, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const proc = this.service(name);
    await proc.stop(signal);
    proc.start();
    await this.waitForService(name);
  }

  async waitForGateway(i: number, timeoutMs = 30_000): Promise<void> {
    await waitFor(
      async () => {
        try {
          const res = await fetch(`${this.baseUrl(i)}/readyz`);
          return res.status === 200;
        } catch {
          return false;
        }
      },
      timeoutMs,
      () => `gateway ${i} not ready:\n${tail(this.gateways[i]!.logs())}`,
    );
  }

  /**
   * Starts another process of an upstream service on its own gRPC address, with the same
   * backends and environment (plus `env`); stop() stops it with the rest.
   */
  async addReplica(service: string, env: Record<string, string> = {}): Promise<ServiceProcess> {
    const address = `127.0.0.1:${await freePort()}`;
    const n = this.replicas.filter((r) => r.service === service).length + 2;
    const proc = new ServiceProcess(
      `${service}-${n}`,
      service,
      {
        ...(await this.metricsEnv(`${service}-${n}`)),
        ...this.backendEnv(),
        ...env,
        [`${service.toUpperCase()}_ADDR`]: address,
      },
      join(this.options.dir, 'logs'),
    );
    this.replicas.push(proc);
    proc.start();
    await waitFor(
      () => checkHealth(address),
      30_000,
      () => `${proc.name} not healthy:\n${tail(proc.logs())}`,
    );
    return proc;
  }

  async restartTickets(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    await this.restartService('tickets', signal);
  }

  /** Restarts gateway i, with `env` added to its environment (none: as it was). */
  async restartGateway(i: number, env?: Record<string, string>): Promise<void> {
    await this.gateways[i]!.stop();
    this.gateways[i]!.start(env);
    await this.waitForGateway(i);
  }

  /** Calls the admin API of gateway i; throws on a non-2xx answer. */
  async admin<T = unknown>(method: string, path: string, body?: unknown, i = 0): Promise<T> {
    const send = () =>
      fetch(`${this.adminUrl(i)}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.adminToken}`,
          'content-type': 'application/json',
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    let res = await send();
    // A 503 with Retry-After asks the caller to come back, as any client would: a service
    // restarted a moment ago is reachable again once the gateway has reconnected (its reconnect
    // back-off is at most 2 s). Every admin call is idempotent or fails before changing anything.
    for (const until = Date.now() + 6_000; res.status === 503 && Date.now() < until;) {
      const wait = Math.min(1, Number(res.headers.get('retry-after')) || 1) * 1000;
      await res.arrayBuffer();
      await new Promise((r) => setTimeout(r, wait));
      res = await send();
    }
    const text = await res.text();
    if (!res.ok) {
      // A server error in a setup call is never what a test expects: keep what every process
      // logged around it in the failure, so a CI run that cannot be repeated still says why.
      const logs = res.status >= 500 ? `\nservice logs (last lines):\n${this.logTails()}` : '';
      throw new Error(`admin ${method} ${path} → ${res.status} ${text}${logs}`);
    }
    const parsed: unknown = text ? JSON.parse(text) : undefined;
    const issued = (parsed as { key?: unknown } | undefined)?.key;
    if (typeof issued === 'string') this.issuedKeys.push(issued);
    return parsed as T;
  }

  /** Every API key issued through admin(); with the admin token, none may appear in a log. */
  readonly issuedKeys: string[] = [];

  /** This stack's secrets (and `extra`) found in its captured logs, masked; [] when clean. */
  leakedSecrets(extra: string[] = []): string[] {
    return leakedSecrets(this.allLogs(), [this.adminToken, ...this.issuedKeys, ...extra]);
  }

  /**
   * Under `npm test` (TEST_TMP_DIR set), records the secret scan of this stack's logs in
   * TEST_TMP_DIR/log-secret-scan.jsonl, so test/security/log-secrets.test.ts can check every
   * stack of the run, the e2e suites' included.
   */
  private recordSecretScan(): void {
    const tmp = process.env.TEST_TMP_DIR;
    if (!tmp || !existsSync(tmp)) return;
    const logs = this.allLogs();
    const leaks = leakedSecrets(logs, [this.adminToken, ...this.issuedKeys]);
    const entry = {
      stack: this.options.dir,
      secrets: this.issuedKeys.length + 1,
      logBytes: logs.length,
      leaks,
    };
    appendFileSync(join(tmp, 'log-secret-scan.jsonl'), `${JSON.stringify(entry)}\n`);
  }

  /** Creates an organization and a key with the given scopes; returns the key. */
  async orgWithKey(
    orgId: string,
    scopes: string[] = ALL_SCOPES,
    settings?: Record<string, number>,
  ): Promise<string> {
    await this.admin('POST', '/admin/v1/orgs', { id: orgId, name: `Org ${orgId}` });
    if (settings) await this.admin('PATCH', `/admin/v1/orgs/${orgId}/settings`, settings);
    return this.keyFor(orgId, scopes);
  }

  async keyFor(orgId: string, scopes: string[] = ALL_SCOPES): Promise<string> {
    return (await this.createKey(orgId, scopes)).key;
  }

  async createKey(
    orgId: string,
    scopes: string[] = ALL_SCOPES,
  ): Promise<{ id: string; key: string }> {
    return this.admin<{ id: string; key: string }>('POST', `/admin/v1/orgs/${orgId}/keys`, {
      name: 'test',
      scopes,
    });
  }

  async stop(): Promise<void> {
    await Promise.all(this.gateways.map((g) => g.stop()));
    await Promise.all([...this.upstreams.values(), ...this.replicas].map((p) => p.stop()));
    this.recordSecretScan();
    if (this.owned) {
      await this.owned.nats?.stop();
      await this.owned.db.drop();
      if (process.env.KEEP_TEST_TMP !== '1')
        rmSync(this.options.dir, { recursive: true, force: true });
    }
  }

  /** The database of a stack on its own test backends. */
  get mysqlUrl(): string {
    if (!this.owned) throw new Error('mysqlUrl: this stack was not started by onTestBackends');
    return this.owned.db.url;
  }

  /** The NATS server of a stack on its own test backends (nats: 'own'). */
  get nats(): NatsHandle {
    if (!this.owned?.nats) throw new Error('nats: this stack has no NATS server of its own');
    return this.owned.nats;
  }

  /** The last lines each process logged, under its name. */
  logTails(lines = 20): string {
    return [...this.upstreams.values(), ...this.replicas, ...this.gateways]
      .map((p) => `--- ${p.name}\n${tail(p.logs(), lines)}`)
      .join('\n');
  }

  allLogs(): string {
    return [...this.upstreams.values(), ...this.replicas, ...this.gateways]
      .map((p) => p.logs())
      .join('\n');
  }
}

const UPSTREAMS = ['tickets', 'knowledge', 'answers', 'digest'];

export const ALL_SCOPES = ['kb:read', 'faq:read', 'tickets:read', 'tickets:write', 'answers:write'];

export async function waitFor(
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  describe: () => string = () => 'condition not met',
  intervalMs = 50,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms: ${describe()}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

function tail(text: string, lines = 30): string {
  return text.split('\n').slice(-lines).join('\n');
}

/** A small HTTP client for tests: returns status, headers and raw + parsed body. */
export async function api(
  baseUrl: string,
  method: string,
  path: string,
  options: {
    key?: string;
    body?: unknown;
    rawBody?: string;
    headers?: Record<string, string>;
  } = {},
): Promise<{ status: number; headers: Headers; text: string; json: any }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body }),
  });
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}
