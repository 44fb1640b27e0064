// An in-memory stand-in for the Qdrant REST API, for tests on machines without
// Qdrant. Every request is checked against Qdrant's own OpenAPI document (path,
// method, parameters, JSON body) and so is every response it sends; any mismatch,
// unknown path or unimplemented operation is recorded as a violation, which the
// tests assert to be empty. It implements the semantics the adapter relies on:
// collections with named dense (cosine) and sparse (idf modifier) vectors, payload
// indexes, upsert, query with prefetch + RRF fusion, scroll, count, delete, facet.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OpenApiValidator } from './openapi-validator.js';

/** Qdrant's OpenAPI description, copied unmodified into the repository (see PROVENANCE.md beside it). */
export const QDRANT_OPENAPI_PATH = resolve(
  fileURLToPath(new URL('../fixtures/qdrant/openapi.json', import.meta.url)),
);

type Payload = Record<string, unknown>;
type PointId = string | number;

interface SparseVector {
  indices: number[];
  values: number[];
}

interface Point {
  id: PointId;
  version: number;
  dense: Map<string, number[]>;
  sparse: Map<string, SparseVector>;
  payload: Payload;
}

interface Collection {
  dense: Map<string, { size: number; distance: string }>;
  sparse: Map<string, { modifier: string }>;
  hnsw: Record<string, unknown>;
  /** quantization_config as created (null: none). */
  quantization: unknown;
  payloadIndexes: Map<string, unknown>;
  points: Map<string, Point>;
  version: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Qdrant's RRF constant (score = Σ 1 / (k + rank)). */
const RRF_K = 2;

export class QdrantStandIn {
  readonly requests: RecordedRequest[] = [];
  readonly violations: string[] = [];
  private readonly collections = new Map<string, Collection>();
  private server: Server | undefined;
  url = '';

  private constructor(private readonly validator: OpenApiValidator) {}

  static async start(): Promise<QdrantStandIn> {
    const standIn = new QdrantStandIn(OpenApiValidator.fromFile(QDRANT_OPENAPI_PATH));
    const server = createServer((req, res) => void standIn.handle(req, res));
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    standIn.server = server;
    standIn.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return standIn;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((done) => server.close(() => done()));
  }

  /** Payload index definitions of a collection (for assertions). */
  payloadIndexes(collection: string): Map<string, unknown> | undefined {
    return this.collections.get(collection)?.payloadIndexes;
  }

  collectionConfig(collection: string): Collection | undefined {
    return this.collections.get(collection);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://standin');
    const raw = await readBody(req);
    let body: unknown;
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw);
      } catch {
        this.violations.push(`${method} ${url.pathname}: body is not JSON`);
        return this.send(res, method, url.pathname, 400, errorBody('malformed JSON'), false);
      }
    }
    this.requests.push({
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      body,
    });
    const problems = this.validator.validateRequest(method, url, body, req.headers['content-type']);
    if (problems.length > 0) {
      this.violations.push(...problems);
      const unknown = typeof this.validator.match(method, url.pathname) === 'string';
      return this.send(
        res,
        method,
        url.pathname,
        unknown ? 404 : 400,
        errorBody(problems.join('; ')),
        !unknown,
      );
    }
    try {
      const result = this.route(method, url, body);
      this.send(res, method, url.pathname, 200, { result, status: 'ok', time: 0.0001 }, true);
    } catch (err) {
      const status = err instanceof HttpError ? err.status : 500;
      if (status === 501 || status === 500)
        this.violations.push(`${method} ${url.pathname}: ${(err as Error).message}`);
      this.send(res, method, url.pathname, status, errorBody((err as Error).message), true);
    }
  }

  private send(
    res: ServerResponse,
    method: string,
    pathname: string,
    status: number,
    body: unknown,
    validate: boolean,
  ): void {
    if (validate)
      this.violations.push(...this.validator.validateResponse(method, pathname, status, body));
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
  }

  private route(method: string, url: URL, body: unknown): unknown {
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const b = (body ?? {}) as Record<string, unknown>;
    if (parts[0] !== 'collections')
      throw new HttpError(501, `not implemented by the stand-in: ${method} ${url.pathname}`);
    if (parts.length === 1 && method === 'GET') {
      return { collections: [...this.collections.keys()].sort().map((name) => ({ name })) };
    }
    const name = parts[1]!;
    const rest = parts.slice(2).join('/');
    const key = `${method} ${rest}`;
    if (key === 'GET exists') return { exists: this.collections.has(name) };
    if (key === 'PUT ') return this.createCollection(name, b);
    if (key === 'DELETE ') return this.collections.delete(name);
    const c = this.collections.get(name);
    if (!c) throw new HttpError(404, `Not found: Collection \`${name}\` doesn't exist!`);
    switch (key) {
      case 'GET ':
        return this.info(c);
      case 'PUT index':
        c.payloadIndexes.set(String(b.field_name), b.field_schema ?? null);
        return this.updated(c);
      case 'PUT points':
        return this.upsert(c, b);
      case 'POST points/delete':
        return this.deletePoints(c, b);
      case 'POST points/count':
        return { count: this.select(c, b.filter).length };
      case 'POST points/scroll':
        return this.scroll(c, b);
      case 'POST points/query':
        return { points: this.query(c, b) };
      case 'POST facet':
        return this.facet(c, b);
      default:
        throw new HttpError(501, `not implemented by the stand-in: ${method} ${url.pathname}`);
    }
  }

  private createCollection(name: string, b: Record<string, unknown>): boolean {
    if (this.collections.has(name))
      throw new HttpError(409, `Wrong input: Collection \`${name}\` already exists!`);
    const vectors = (b.vectors ?? {}) as Record<string, unknown>;
    const dense = new Map<string, { size: number; distance: string }>();
    if (typeof vectors.size === 'number')
      dense.set('', vectors as { size: number; distance: string });
    else
      for (const [k, v] of Object.entries(vectors))
        dense.set(k, v as { size: number; distance: string });
    const sparse = new Map<string, { modifier: string }>();
    for (const [k, v] of Object.entries(
      (b.sparse_vectors ?? {}) as Record<string, { modifier?: string }>,
    )) {
      sparse.set(k, { modifier: v?.modifier ?? 'none' });
    }
    this.collections.set(name, {
      dense,
      sparse,
      hnsw: (b.hnsw_config ?? {}) as Record<string, unknown>,
      quantization: b.quantization_config ?? null,
      payloadIndexes: new Map(),
      points: new Map(),
      version: 0,
    });
    return true;
  }

  private info(c: Collection): unknown {
    const vectors = Object.fromEntries(
      [...c.dense].map(([k, v]) => [k, { size: v.size, distance: v.distance }]),
    );
    return {
      status: 'green',
      optimizer_status: 'ok',
      points_count: c.points.size,
      indexed_vectors_count: 0,
      segments_count: 1,
      config: {
        params: {
          vectors,
          sparse_vectors: Object.fromEntries(
            [...c.sparse].map(([k, v]) => [k, { modifier: v.modifier }]),
          ),
          shard_number: 1,
          replication_factor: 1,
          write_consistency_factor: 1,
          on_disk_payload: true,
        },
        hnsw_config: { m: 16, ef_construct: 100, full_scan_threshold: 10000, ...c.hnsw },
        quantization_config: c.quantization,
        optimizer_config: {
          deleted_threshold: 0.2,
          vacuum_min_vector_number: 1000,
          default_segment_number: 0,
          flush_interval_sec: 5,
        },
      },
      payload_schema: {},
    };
  }

  private updated(c: Collection): unknown {
    return { operation_id: ++c.version, status: 'completed' };
  }

  private upsert(c: Collection, b: Record<string, unknown>): unknown {
    const points = b.points as
      { id: PointId; vector: Record<string, unknown>; payload?: Payload | null }[] | undefined;
    if (!Array.isArray(points))
      throw new HttpError(501, 'only the PointsList form of upsert is implemented');
    const version = ++c.version;
    for (const p of points) {
      const dense = new Map<string, number[]>();
      const sparse = new Map<string, SparseVector>();
      for (const [vname, v] of Object.entries(p.vector ?? {})) {
        if (Array.isArray(v)) {
          const spec = c.dense.get(vname);
          if (!spec) throw new HttpError(400, `Wrong input: Not existing vector name: ${vname}`);
          if (v.length !== spec.size)
            throw new HttpError(
              400,
              `Wrong input: Vector dimension error: expected dim: ${spec.size}, got ${v.length}`,
            );
          dense.set(vname, spec.distance === 'Cosine' ? normalize(v as number[]) : (v as number[]));
        } else {
          if (!c.sparse.has(vname))
            throw new HttpError(400, `Wrong input: Not existing vector name: ${vname}`);
          const sv = v as SparseVector;
          if (
            sv.indices.length !== sv.values.length ||
            new Set(sv.indices).size !== sv.indices.length
          ) {
            throw new HttpError(
              400,
              'Wrong input: sparse vector indices must be unique and match values',
            );
          }
          sparse.set(vname, { indices: [...sv.indices], values: [...sv.values] });
        }
      }
      for (const vname of c.dense.keys()) {
        if (!dense.has(vname)) throw new HttpError(400, `Wrong input: Vector ${vname} is missing`);
      }
      c.points.set(String(p.id), {
        id: p.id,
        version,
        dense,
        sparse,
        payload: { ...(p.payload ?? {}) },
      });
    }
    return { operation_id: version, status: 'completed' };
  }

  private deletePoints(c: Collection, b: Record<string, unknown>): unknown {
    if (Array.isArray(b.points))
      for (const id of b.points as PointId[]) c.points.delete(String(id));
    else for (const p of this.select(c, b.filter)) c.points.delete(String(p.id));
    return this.updated(c);
  }

  private scroll(c: Collection, b: Record<string, unknown>): unknown {
    const limit = typeof b.limit === 'number' ? b.limit : 10;
    const all = this.select(c, b.filter).sort((x, y) => compareIds(x.id, y.id));
    const start =
      b.offset === undefined || b.offset === null
        ? 0
        : all.findIndex((p) => compareIds(p.id, b.offset as PointId) >= 0);
    const page = start < 0 ? [] : all.slice(start, start + limit);
    const next = start < 0 ? undefined : all[start + limit];
    return {
      points: page.map((p) => ({
        id: p.id,
        ...this.project(p, b.with_payload ?? true, b.with_vector ?? false),
      })),
      next_page_offset: next ? next.id : null,
    };
  }

  private query(c: Collection, b: Record<string, unknown>): unknown[] {
    const limit = typeof b.limit === 'number' ? b.limit : 10;
    const allowed = new Set(this.select(c, b.filter).map((x) => String(x.id)));
    return this.scored(c, b, allowed)
      .slice(0, limit)
      .map(({ point, score }) => ({
        id: point.id,
        version: point.version,
        score,
        ...this.project(point, b.with_payload ?? false, b.with_vector ?? false),
      }));
  }

  /**
   * The points of a query or prefetch, best first, limited: with prefetches (nested ones
   * too), its query is applied to their results: fused with `{fusion: "rrf"}`, or rescored
   * by a dense vector; without, its own nearest points. `allowed`: the top request's filter.
   */
  private scored(
    c: Collection,
    q: Record<string, unknown>,
    allowed: Set<string>,
  ): { point: Point; score: number }[] {
    const limit = typeof q.limit === 'number' ? q.limit : 10;
    const prefetch = prefetchesOf(q);
    if (prefetch.length === 0)
      return this.nearest(c, q).filter((s) => allowed.has(String(s.point.id)));
    const lists = (prefetch as Record<string, unknown>[]).map((p) => this.scored(c, p, allowed));
    let scored: { point: Point; score: number }[];
    const query = q.query as { fusion?: string } | number[] | undefined;
    if (Array.isArray(query)) {
      // Rescoring: the prefetched points, scored by the dense vector alone.
      const seen = new Map<string, Point>();
      for (const list of lists) for (const s of list) seen.set(String(s.point.id), s.point);
      scored = this.nearest(c, { ...q, prefetch: undefined, limit: Infinity }).filter((s) =>
        seen.has(String(s.point.id)),
      );
    } else if (query?.fusion === 'rrf') {
      const fused = new Map<string, { point: Point; score: number }>();
      for (const list of lists) {
        list.forEach((s, rank) => {
          const id = String(s.point.id);
          const f = fused.get(id) ?? { point: s.point, score: 0 };
          f.score += 1 / (RRF_K + rank + 1);
          fused.set(id, f);
        });
      }
      scored = [...fused.values()];
    } else {
      throw new HttpError(
        501,
        'only {fusion: "rrf"} and dense rescoring are implemented over prefetches',
      );
    }
    scored.sort((x, y) => y.score - x.score || compareIds(x.point.id, y.point.id));
    return scored.slice(0, limit);
  }

  /** Nearest points for a plain dense or sparse vector query, filtered and limited. */
  private nearest(c: Collection, q: Record<string, unknown>): { point: Point; score: number }[] {
    const using = typeof q.using === 'string' ? q.using : '';
    const limit = typeof q.limit === 'number' ? q.limit : 10;
    const candidates = this.select(c, q.filter);
    const out: { point: Point; score: number }[] = [];
    if (Array.isArray(q.query)) {
      const spec = c.dense.get(using);
      if (!spec) throw new HttpError(400, `Wrong input: Not existing vector name: ${using}`);
      if (q.query.length !== spec.size)
        throw new HttpError(400, `Wrong input: Vector dimension error: expected dim: ${spec.size}`);
      const v = spec.distance === 'Cosine' ? normalize(q.query as number[]) : (q.query as number[]);
      for (const p of candidates) {
        const d = p.dense.get(using);
        if (d) out.push({ point: p, score: dotDense(v, d) });
      }
    } else if (
      q.query &&
      typeof q.query === 'object' &&
      Array.isArray((q.query as SparseVector).indices)
    ) {
      const spec = c.sparse.get(using);
      if (!spec) throw new HttpError(400, `Wrong input: Not existing vector name: ${using}`);
      const sq = q.query as SparseVector;
      const weights = new Map<number, number>();
      sq.indices.forEach((index, i) =>
        weights.set(
          index,
          (sq.values[i] ?? 0) * (spec.modifier === 'idf' ? this.idf(c, using, index) : 1),
        ),
      );
      for (const p of candidates) {
        const d = p.sparse.get(using);
        if (!d) continue;
        let score = 0;
        let overlap = false;
        d.indices.forEach((index, i) => {
          const w = weights.get(index);
          if (w !== undefined) {
            overlap = true;
            score += w * d.values[i]!;
          }
        });
        if (overlap) out.push({ point: p, score });
      }
    } else {
      throw new HttpError(
        501,
        `query form not implemented: ${JSON.stringify(q.query).slice(0, 80)}`,
      );
    }
    out.sort((x, y) => y.score - x.score || compareIds(x.point.id, y.point.id));
    return out.slice(0, limit);
  }

  /** Qdrant's IDF modifier: collection-wide statistics of the sparse vector. */
  private idf(c: Collection, using: string, index: number): number {
    let n = 0;
    let df = 0;
    for (const p of c.points.values()) {
      const v = p.sparse.get(using);
      if (!v) continue;
      n++;
      if (v.indices.includes(index)) df++;
    }
    return Math.log((n - df + 0.5) / (df + 0.5) + 1);
  }

  private facet(c: Collection, b: Record<string, unknown>): unknown {
    const key = String(b.key);
    const limit = typeof b.limit === 'number' ? b.limit : 10;
    const counts = new Map<string | number | boolean, number>();
    for (const p of this.select(c, b.filter)) {
      const value = p.payload[key];
      const values = Array.isArray(value)
        ? new Set(value)
        : value === undefined || value === null
          ? []
          : [value];
      for (const v of values) {
        if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')
          counts.set(v, (counts.get(v) ?? 0) + 1);
      }
    }
    const hits = [...counts.entries()]
      .map(([value, count]) => ({ value, count }))
      .sort((x, y) => y.count - x.count || String(x.value).localeCompare(String(y.value)));
    return { hits: hits.slice(0, limit) };
  }

  private select(c: Collection, filter: unknown): Point[] {
    return [...c.points.values()].filter((p) => matchesFilter(p, filter));
  }

  private project(
    p: Point,
    withPayload: unknown,
    withVector: unknown,
  ): { payload?: Payload; vector?: Record<string, unknown> } {
    const out: { payload?: Payload; vector?: Record<string, unknown> } = {};
    if (withPayload === true) out.payload = { ...p.payload };
    else if (Array.isArray(withPayload)) {
      out.payload = Object.fromEntries(
        withPayload.filter((k) => k in p.payload).map((k) => [k, p.payload[k as string]]),
      );
    } else if (withPayload && typeof withPayload === 'object') {
      throw new HttpError(501, 'payload selectors are not implemented');
    }
    const names =
      withVector === true
        ? [...p.dense.keys(), ...p.sparse.keys()]
        : Array.isArray(withVector)
          ? (withVector as string[])
          : [];
    if (names.length > 0) {
      out.vector = {};
      for (const n of names) {
        const v = p.dense.get(n) ?? p.sparse.get(n);
        if (v) out.vector[n] = v;
      }
    }
    return out;
  }
}

function matchesFilter(p: Point, filter: unknown): boolean {
  if (filter === undefined || filter === null) return true;
  const f = filter as {
    must?: unknown;
    should?: unknown;
    must_not?: unknown;
    min_should?: unknown;
  };
  if (f.min_should !== undefined && f.min_should !== null)
    throw new HttpError(501, 'min_should is not implemented');
  const list = (x: unknown): unknown[] =>
    x === undefined || x === null ? [] : Array.isArray(x) ? x : [x];
  if (!list(f.must).every((c) => matchesCondition(p, c))) return false;
  const should = list(f.should);
  if (should.length > 0 && !should.some((c) => matchesCondition(p, c))) return false;
  return !list(f.must_not).some((c) => matchesCondition(p, c));
}

function matchesCondition(p: Point, condition: unknown): boolean {
  const c = condition as Record<string, unknown>;
  if (Array.isArray(c.has_id))
    return (c.has_id as PointId[]).some((id) => String(id) === String(p.id));
  if ('must' in c || 'should' in c || 'must_not' in c) return matchesFilter(p, c);
  if (typeof c.key === 'string' && c.match && typeof c.match === 'object') {
    const value = p.payload[c.key];
    const values = Array.isArray(value) ? value : [value];
    const m = c.match as { value?: unknown; any?: unknown[]; except?: unknown[] };
    if ('value' in m) return values.includes(m.value);
    if (Array.isArray(m.any)) return values.some((v) => m.any!.includes(v));
    if (Array.isArray(m.except)) return values.every((v) => !m.except!.includes(v));
  }
  throw new HttpError(501, `condition not implemented: ${JSON.stringify(condition).slice(0, 120)}`);
}

/** Qdrant orders UUID ids by their bytes (= lower-case hex order) and puts integers first. */
function compareIds(a: PointId, b: PointId): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'number') return -1;
  if (typeof b === 'number') return 1;
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
}

function normalize(v: number[]): number[] {
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return norm === 0 ? v.slice() : v.map((x) => Math.fround(x / norm));
}

function dotDense(a: number[], b: number[]): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

function errorBody(message: string): unknown {
  return { status: { error: message }, time: 0 };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Asserts-friendly list of requests that read or delete points without the tenant filter. */
export function requestsWithoutOrgFilter(requests: RecordedRequest[]): string[] {
  const problems: string[] = [];
  for (const r of requests) {
    const op = /\/points\/(query|scroll|count|delete)$/.exec(r.path)?.[1];
    if (!op) continue;
    const body = (r.body ?? {}) as Record<string, unknown>;
    if (!hasOrgCondition(body.filter)) problems.push(`${r.method} ${r.path}: no org_id filter`);
    if (op === 'query') {
      // Every prefetch, nested ones included, must carry the filter itself.
      const check = (q: Record<string, unknown>) => {
        const prefetch = prefetchesOf(q);
        for (const p of prefetch as Record<string, unknown>[]) {
          if (!hasOrgCondition(p.filter))
            problems.push(`${r.method} ${r.path}: prefetch without org_id filter`);
          check(p);
        }
      };
      check(body);
    }
  }
  return problems;
}

function hasOrgCondition(filter: unknown): boolean {
  const must = (filter as { must?: unknown } | undefined)?.must;
  const list = Array.isArray(must) ? must : must ? [must] : [];
  return list.some((c) => {
    const cond = c as { key?: unknown; match?: { value?: unknown } };
    return (
      cond.key === 'org_id' && typeof cond.match?.value === 'string' && cond.match.value.length > 0
    );
  });
}

/** A Query API request's `prefetch`: absent, one object or a list of them. */
function prefetchesOf(q: Record<string, unknown>): unknown[] {
  if (q.prefetch === undefined || q.prefetch === null) return [];
  return Array.isArray(q.prefetch) ? q.prefetch : [q.prefetch];
}
