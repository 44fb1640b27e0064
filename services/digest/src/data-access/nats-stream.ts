import {
  nanos,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
  type StreamConfig,
} from 'nats';
import type { Logger } from '@support-agent/shared';

/** Stream settings of the tickets service (services/tickets/src/data-access/event-publisher.ts). */
export const STREAM_NAME = 'TICKETS';
export const STREAM_SUBJECTS = ['tickets.>'];
export const FILTER_SUBJECT = 'tickets.>';
export const DUPLICATE_WINDOW_MS = 2 * 60 * 1000;

const JS_STREAM_NOT_FOUND = 10059;
const JS_CONSUMER_NOT_FOUND = 10014;
const JS_STREAM_NAME_IN_USE = 10058;

/** Creates TICKETS when missing, with the tickets service's settings; never changes an existing stream. */
export async function ensureTicketsStream(
  jsm: JetStreamManager,
  replicas: number,
  logger: Logger,
): Promise<void> {
  try {
    await jsm.streams.info(STREAM_NAME);
    return;
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  const config: Partial<StreamConfig> = {
    name: STREAM_NAME,
    subjects: STREAM_SUBJECTS,
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    duplicate_window: nanos(DUPLICATE_WINDOW_MS),
    num_replicas: replicas,
  };
  try {
    await jsm.streams.add(config);
    logger.info({ stream: STREAM_NAME }, 'created the JetStream stream');
  } catch (err) {
    // The tickets service (or another replica) created it meanwhile.
    const code = (err as { api_error?: { err_code?: number } }).api_error?.err_code;
    if (
      code !== JS_STREAM_NAME_IN_USE &&
      !/already in use|already exists/i.test((err as Error).message)
    )
      throw err;
  }
}

export function isNotFound(err: unknown): boolean {
  const e = err as { code?: string | number; api_error?: { err_code?: number }; message?: string };
  const code = e?.api_error?.err_code;
  return (
    code === JS_STREAM_NOT_FOUND ||
    code === JS_CONSUMER_NOT_FOUND ||
    e?.code === '404' ||
    e?.code === 404 ||
    /not found/i.test(e?.message ?? '')
  );
}
