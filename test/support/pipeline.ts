// Helpers for end-to-end tests of the event pipeline (tickets → JetStream → answers / digest):
// publishing envelopes the way the tickets outbox relay does, watching durable consumers catch
// up, reading MySQL rows, and the calendar arithmetic the contract uses (UTC months, ISO weeks).
import assert from 'node:assert/strict';
import mysql from 'mysql2/promise';
import { connect } from 'nats';
import { STREAM_NAME as STREAM } from '@support-agent/events';
import { StreamPublisher, type EventEnvelope } from './events.js';
import { waitFor } from './stack.js';

export { createdEnvelope } from './events.js';

/**
 * Publishes envelopes as the outbox relay does (subject = type, Nats-Msg-Id = id unless
 * `msgId` says otherwise); creates the stream with the contract's settings if it does not
 * exist yet. Returns how many JetStream dropped as duplicates.
 */
export async function publishEvents(
  natsUrl: string,
  events: EventEnvelope[],
  msgId: (e: EventEnvelope) => string = (e) => e.id,
): Promise<{ duplicates: number }> {
  const publisher = await StreamPublisher.connect(natsUrl);
  try {
    return await publisher.publish(events, msgId);
  } finally {
    await publisher.close();
  }
}

/** Messages a durable consumer has not settled yet (pending + awaiting ack); undefined if unknown. */
export async function consumerBacklog(
  natsUrl: string,
  consumer: string,
): Promise<number | undefined> {
  let nc;
  try {
    nc = await connect({ servers: natsUrl, timeout: 2_000 });
    const info = await (await nc.jetstreamManager()).consumers.info(STREAM, consumer);
    return info.num_pending + info.num_ack_pending;
  } catch {
    return undefined;
  } finally {
    await nc?.close();
  }
}

/** Waits until a durable consumer has settled every message currently in the stream. */
export async function waitForConsumer(
  natsUrl: string,
  consumer: string,
  timeoutMs = 30_000,
): Promise<void> {
  let last: number | undefined;
  await waitFor(
    async () => (last = await consumerBacklog(natsUrl, consumer)) === 0,
    timeoutMs,
    () => `consumer ${consumer} still has ${last ?? 'an unknown number of'} messages to settle`,
    100,
  );
}

/** Runs one query against a test database. */
export async function queryRows<T>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const conn = await mysql.createConnection({ uri: url, dateStrings: true });
  try {
    const [rows] = await conn.query(sql, params);
    return rows as T[];
  } finally {
    await conn.end();
  }
}

/** Reads a Prometheus endpoint (a port on 127.0.0.1, or a URL) as `name{labels}` → value. */
export async function scrapeMetrics(endpoint: number | string): Promise<Map<string, number>> {
  const url = typeof endpoint === 'number' ? `http://127.0.0.1:${endpoint}/metrics` : endpoint;
  const res = await fetch(url);
  assert.equal(res.status, 200, url);
  const out = new Map<string, number>();
  for (const line of (await res.text()).split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

/** Reads one sample of a Prometheus text endpoint (0 when absent). */
export async function scrapeMetric(
  port: number,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || !line.startsWith(name)) continue;
    const m = /^([a-z_]+)(?:\{([^}]*)\})? ([0-9.eE+-]+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = (m[2] ?? '').split(',').filter(Boolean);
    if (want.every((w) => have.includes(w))) return Number(m[3]);
  }
  return 0;
}

const DAY_MS = 86_400_000;

/** YYYY-MM-DD of a UTC instant. */
export function isoDate(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/** Monday 00:00 UTC of the ISO week containing `d`. */
export function weekStartOf(d: Date): Date {
  const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  const weekday = (new Date(day).getUTCDay() + 6) % 7; // Monday = 0
  return new Date(day - weekday * DAY_MS);
}

export function addDays(d: Date, days: number): Date {
  return new Date(d.getTime() + days * DAY_MS);
}

/** Seconds from `now` to the first instant of the next UTC calendar month. */
export function secondsToNextUtcMonth(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return Math.ceil((next - now.getTime()) / 1000);
}
