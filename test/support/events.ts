import { connect } from 'nats';
import { STREAM_NAME } from '@support-agent/events';

export interface EventEnvelope {
  id: string;
  type: string;
  org_id: string;
  ticket_id: number;
  occurred_at: string;
  data: Record<string, unknown>;
}

/** Reads every message stored in a JetStream stream, in sequence order. */
export async function readStream(
  natsUrl: string,
  stream = STREAM_NAME,
): Promise<Array<{ subject: string; msgId: string | undefined; event: EventEnvelope }>> {
  const nc = await connect({ servers: natsUrl, timeout: 5_000 });
  try {
    const jsm = await nc.jetstreamManager();
    let info;
    try {
      info = await jsm.streams.info(stream);
    } catch {
      return [];
    }
    const out: Array<{ subject: string; msgId: string | undefined; event: EventEnvelope }> = [];
    for (
      let seq = info.state.first_seq;
      seq <= info.state.last_seq && info.state.messages > 0;
      seq++
    ) {
      try {
        const m = await jsm.streams.getMessage(stream, { seq });
        out.push({
          subject: m.subject,
          msgId: m.header?.get('Nats-Msg-Id') || undefined,
          event: m.json<EventEnvelope>(),
        });
      } catch {
        // deleted sequence
      }
    }
    return out;
  } finally {
    await nc.close();
  }
}
