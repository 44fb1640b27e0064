// Every stored event from the start, for rebuilding state from scratch (the digest's backfill).
import { createReadStream, existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { REPLAY_CONSUMER, STREAM_NAME } from './contract.js';
import { connectNats, isNotFound } from './jetstream.js';

const FETCH_BATCH = 256;
/** Empty fetches in a row, with messages still stored, after which the replay gives up. */
const MAX_IDLE_FETCHES = 30;

/**
 * The body of every message of the stream from sequence 1 up to the last one stored when the
 * replay began, through an ordered (ephemeral, flow-controlled) consumer.
 */
export async function* replayTicketStream(url: string): AsyncGenerator<string> {
  const nc = await connectNats(url, 'ticket-events-replay', { timeout: 5_000 });
  try {
    const jsm = await nc.jetstreamManager();
    let last: number;
    try {
      const info = await jsm.streams.info(STREAM_NAME);
      if (info.state.messages === 0) return;
      last = info.state.last_seq;
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    const consumer = await nc.jetstream().consumers.get(STREAM_NAME, { ...REPLAY_CONSUMER });
    let seq = 0;
    let idleFetches = 0;
    while (seq < last) {
      const batch = await consumer.fetch({ max_messages: FETCH_BATCH, expires: 2_000 });
      let got = 0;
      for await (const m of batch) {
        got++;
        seq = m.info.streamSequence;
        yield m.string();
        if (seq >= last) break;
      }
      idleFetches = got === 0 ? idleFetches + 1 : 0;
      if (idleFetches === 0) continue;
      // An empty fetch: either the rest up to `last` was deleted meanwhile (limits), and nothing
      // more will come, or the server was slow (a loaded machine): then keep fetching.
      const first = (await jsm.streams.info(STREAM_NAME)).state.first_seq;
      if (first > last || idleFetches >= MAX_IDLE_FETCHES) break;
    }
  } finally {
    await nc.close();
  }
}

/** Every line of the embedded event file. */
export async function* replayEventFile(path: string): AsyncGenerator<string> {
  if (!existsSync(path)) return;
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim()) yield line;
  }
}
