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
  /**
   * JetStream: handler calls at the same time, most events per call of a batch handler and how
   * long it waits for them, ack wait, stream replicas, pull wait.
   */
  concurrency: number;
  batchSize?: number;
  lingerMs?: number;
  ackWaitMs: number;
  replicas: number;
  pullExpiresMs?: number;
  /** The embedded twin: where it keeps its offset, lines at once, lines per batch, lines between saves. */
  file: { offsetFile: string; concurrency: number; batchSize?: number; saveEvery: number };
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
    ...(options.file.batchSize === undefined ? {} : { batchSize: options.file.batchSize }),
    saveEvery: options.file.saveEvery,
  });
}
