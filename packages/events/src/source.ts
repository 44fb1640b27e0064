import type { Logger } from '@support-agent/shared';
import { eventFilePath, type DurableConsumer } from './contract.js';
import { JetStreamTicketConsumer } from './consumer.js';
import type { TicketEventSource } from './delivery.js';
import { FileTicketConsumer } from './file-consumer.js';

export interface TicketEventSourceOptions {
  consumer: DurableConsumer;
  /** NATS servers; unset = the embedded event file under dataDir. */
  natsUrl: string | undefined;
  dataDir: string;
  /** JetStream: messages handled at the same time, ack wait, stream replicas, pull wait. */
  concurrency: number;
  ackWaitMs: number;
  replicas: number;
  pullExpiresMs?: number;
  /** The embedded twin: where it keeps its offset, lines at once, lines between saves. */
  file: { offsetFile: string; concurrency: number; saveEvery: number };
}

/** The durable consumer a service reads ticket events with: JetStream when NATS is configured, else the event file. */
export function openTicketEventSource(
  options: TicketEventSourceOptions,
  logger: Logger,
): TicketEventSource {
  if (options.natsUrl) return new JetStreamTicketConsumer(options.natsUrl, logger, options);
  return new FileTicketConsumer(eventFilePath(options.dataDir), options.file.offsetFile, logger, {
    consumer: options.consumer,
    concurrency: options.file.concurrency,
    saveEvery: options.file.saveEvery,
  });
}
