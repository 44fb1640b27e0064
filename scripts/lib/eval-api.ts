// The HTTP side of the quality evaluations (eval-search, eval-answers): calls with retries,
// and a fresh organization holding an FAQ collection, created through the admin API.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { mapConcurrently as mapWithLimit, sleep } from '@support-agent/shared';
import type { CorpusEntry } from '@support-agent/quality';

/** Bytes of JSON per import request: well under the API's 64 KiB body limit. */
const IMPORT_CHUNK_BYTES = 48 * 1024;

export const BASE_URL = (process.env.BASE_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
export const ADMIN_URL = (process.env.ADMIN_URL ?? 'http://127.0.0.1:8081').replace(/\/+$/, '');

export function adminToken(): string {
  if (process.env.ADMIN_TOKEN) return process.env.ADMIN_TOKEN;
  const path = join(process.env.DATA_DIR ?? './data', 'admin-token');
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    throw new Error(
      `no ADMIN_TOKEN and no readable ${path}: start the stack with \`npm start\` or set ADMIN_TOKEN`,
    );
  }
}

/** fetch with JSON in and out; retries 429 (Retry-After) and 503 a few times. */
export async function call<T>(
  url: string,
  init: { method?: string; token: string; body?: unknown; allow?: number[] },
): Promise<{ status: number; body: T }> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(url, {
      method: init.method ?? 'GET',
      headers: {
        authorization: `Bearer ${init.token}`,
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });
    const text = await res.text();
    if ((res.status === 429 || res.status === 503) && attempt < 8) {
      const retryAfter = Number(res.headers.get('retry-after'));
      await sleep(
        Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : 250 * 2 ** attempt,
      );
      continue;
    }
    let body: unknown;
    try {
      body = text.length > 0 ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    if (!res.ok && !(init.allow ?? []).includes(res.status)) {
      throw new Error(`${init.method ?? 'GET'} ${url} → ${res.status}: ${text.slice(0, 300)}`);
    }
    return { status: res.status, body: body as T };
  }
}

/** Splits entries into JSON arrays of at most `maxBytes`. */
function chunksBySize<T>(items: T[], maxBytes: number): T[][] {
  const chunks: T[][] = [];
  let current: T[] = [];
  let size = 2;
  for (const item of items) {
    const n = Buffer.byteLength(JSON.stringify(item)) + 1;
    if (current.length > 0 && size + n > maxBytes) {
      chunks.push(current);
      current = [];
      size = 2;
    }
    current.push(item);
    size += n;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

export interface EvalOrg {
  orgId: string;
  /** An API key of the organization with the requested scopes. */
  key: string;
  admin: string;
  /** The organization's settings after the change (empty when the API refused it). */
  settings: { high_confidence_threshold?: number; deflection_monthly_limit?: number };
}

/**
 * A fresh organization (so nothing else in the KB affects the numbers) with the corpus
 * imported (entry id = faq_id), rate limits lifted where the API allows it, optional
 * settings applied, and an API key with `scopes`.
 */
export async function createEvalOrg(
  label: string,
  corpus: CorpusEntry[],
  scopes: string[],
  settings: Record<string, number> = {},
): Promise<EvalOrg> {
  const admin = adminToken();
  const orgId = `${label}-${Date.now().toString(36)}`;
  await call(`${ADMIN_URL}/admin/v1/orgs`, {
    method: 'POST',
    token: admin,
    body: { name: `${label} ${new Date().toISOString()}`, id: orgId },
  });
  // The evaluations send hundreds of requests a minute; lift the per-key and per-org limits.
  const patched = await call<EvalOrg['settings']>(`${ADMIN_URL}/admin/v1/orgs/${orgId}/settings`, {
    method: 'PATCH',
    token: admin,
    body: { rate_limit_per_key_per_min: 100_000, rate_limit_per_org_per_min: 100_000, ...settings },
    allow: [400, 404, 405],
  });
  if (patched.status !== 200)
    console.error(`note: could not change settings (${patched.status}); 429s will be waited out`);
  const { body: created } = await call<{ key: string }>(
    `${ADMIN_URL}/admin/v1/orgs/${orgId}/keys`,
    { method: 'POST', token: admin, body: { name: label, scopes } },
  );

  let inserted = 0;
  for (const chunk of chunksBySize(
    corpus.map((c) => ({ id: c.faq_id, question: c.question, answer: c.answer })),
    IMPORT_CHUNK_BYTES,
  )) {
    const { body } = await call<{
      inserted: number;
      updated: number;
      failed: { line: number; message: string }[];
    }>(`${ADMIN_URL}/admin/v1/orgs/${orgId}/kb/entries`, {
      method: 'POST',
      token: admin,
      body: chunk,
    });
    if (body.failed.length > 0)
      throw new Error(`import failed: ${JSON.stringify(body.failed.slice(0, 3))}`);
    inserted += body.inserted + body.updated;
  }
  if (inserted !== corpus.length)
    throw new Error(`imported ${inserted} of ${corpus.length} entries`);
  const settingsAfter = patched.status === 200 ? patched.body : {};
  return { orgId, key: created.key, admin, settings: settingsAfter };
}

/** Requests an evaluation keeps in flight against the stack. */
const CONCURRENCY = 4;

/** Runs `work` over `items`, CONCURRENCY at a time; results in input order. */
export const mapConcurrently = <T, R>(items: T[], work: (item: T, index: number) => Promise<R>) =>
  mapWithLimit(items, CONCURRENCY, work);
