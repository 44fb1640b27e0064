// Connecting to NATS and making sure the stream exists: what the publisher, the consumer and
// the replay share.
import { connect, type ConnectionOptions, type JetStreamManager, type NatsConnection } from 'nats';
import { NATS_CLIENT_OPTIONS, waitAtMost, type Logger } from '@support-agent/shared';
import { STREAM_NAME, streamConfig, streamUpdate } from './contract.js';

/** NATS/JetStream API error codes (nats-server's server/errors.json). */
const JS_STREAM_NOT_FOUND = 10059;
const JS_CONSUMER_NOT_FOUND = 10014;
const JS_STREAM_NAME_IN_USE = 10058;
const JS_SUBJECTS_OVERLAP = 10065;

/** Connects to `url` (a comma-separated server list) with the services' shared client options. */
export function connectNats(
  url: string,
  name: string,
  options: Partial<ConnectionOptions> = {},
): Promise<NatsConnection> {
  return connect({
    servers: url.split(',').map((s) => s.trim()),
    name,
    ...NATS_CLIENT_OPTIONS,
    ...options,
  });
}

/** Drains a connection (flushing what was sent), bounded: a drain cannot finish while disconnected. */
export async function drainBounded(nc: NatsConnection, ms: number): Promise<void> {
  if (nc.isClosed()) return;
  await waitAtMost(nc.drain(), ms);
  if (!nc.isClosed()) await nc.close().catch(() => undefined);
}

function apiErrorCode(err: unknown): number | undefined {
  return (err as { api_error?: { err_code?: number } } | undefined)?.api_error?.err_code;
}

/** A JetStream API answer that the stream or consumer asked about does not exist. */
export function isNotFound(err: unknown): boolean {
  const code = apiErrorCode(err);
  return code === JS_STREAM_NOT_FOUND || code === JS_CONSUMER_NOT_FOUND;
}

/** What a pull reports when its consumer or stream is gone. */
export function isMissingConsumer(err: unknown): boolean {
  const e = err as { code?: string | number; message?: string } | undefined;
  return (
    String(e?.code) === '404' ||
    /consumer not found|stream not found|consumer deleted/i.test(e?.message ?? '')
  );
}

/** Someone else created the same stream or consumer at the same moment. */
export function isAlreadyCreated(err: unknown): boolean {
  return (
    apiErrorCode(err) === JS_STREAM_NAME_IN_USE ||
    /already (in use|exists)/i.test((err as Error | undefined)?.message ?? '')
  );
}

/**
 * Creates the stream with the contract's settings when it is missing. With `update` (the
 * producer) an existing stream's subjects and duplicate window are brought up to date;
 * consumers never change an existing stream.
 */
export async function ensureTicketsStream(
  jsm: JetStreamManager,
  options: { replicas: number; update: boolean; logger?: Logger },
): Promise<void> {
  try {
    const info = await jsm.streams.info(STREAM_NAME);
    const change = options.update ? streamUpdate(info.config) : undefined;
    if (change) {
      await jsm.streams.update(STREAM_NAME, change);
      options.logger?.info({ stream: STREAM_NAME }, 'stream configuration updated');
    }
    return;
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  try {
    await jsm.streams.add(streamConfig(options.replicas));
    options.logger?.info({ stream: STREAM_NAME }, 'stream created');
  } catch (err) {
    if (isAlreadyCreated(err)) return;
    // While another process's add of the same stream is under way, the server answers a second
    // add that the subjects overlap an existing stream: fine if that stream is now ours.
    if (apiErrorCode(err) === JS_SUBJECTS_OVERLAP && (await streamExists(jsm))) return;
    throw err;
  }
}

async function streamExists(jsm: JetStreamManager): Promise<boolean> {
  try {
    await jsm.streams.info(STREAM_NAME);
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}
