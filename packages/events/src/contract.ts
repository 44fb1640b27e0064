// The JetStream side of the ticket events contract: the stream, its subjects and settings,
// and the settings of every consumer of it. The one module the publisher, the consumers and
// the replay import (docs/events.md); nothing else spells a stream or consumer setting.
import { join } from 'node:path';
import {
  AckPolicy,
  DeliverPolicy,
  nanos,
  RetentionPolicy,
  StorageType,
  type ConsumerConfig,
  type OrderedConsumerOptions,
  type StreamConfig,
} from 'nats';

/** The stream every ticket event is stored in. */
export const STREAM_NAME = 'TICKETS';

/** The event types; each is published on the subject of its name. */
export const EVENT_TYPES = [
  'tickets.created',
  'tickets.triaged',
  'tickets.status_changed',
  'tickets.category_changed',
] as const;
export type TicketEventType = (typeof EVENT_TYPES)[number];

/** Every subject of the stream (and the filter of a consumer that wants every type). */
export const ALL_SUBJECTS = 'tickets.>';

/** The embedded stand-in for the stream: one JSONL file of envelopes under DATA_DIR. */
export function eventFilePath(dataDir: string): string {
  return join(dataDir, 'events', 'tickets.jsonl');
}

/** Copies the outbox relay publishes again within this window are dropped by JetStream (Nats-Msg-Id). */
const DUPLICATE_WINDOW_MS = 2 * 60_000;

/**
 * The stream as whoever comes first creates it (the tickets service, or a consumer that starts
 * before it). Limits retention without a maximum age: events are kept, so the digest's backfill
 * can replay the stream from sequence 1.
 */
export function streamConfig(replicas: number): Partial<StreamConfig> {
  return {
    name: STREAM_NAME,
    subjects: [ALL_SUBJECTS],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    max_age: 0,
    duplicate_window: nanos(DUPLICATE_WINDOW_MS),
    num_replicas: replicas,
  };
}

/**
 * What the producer changes on an existing stream: its subjects and duplicate window, when
 * they differ; undefined when nothing. Replicas and limits an operator set are left alone.
 */
export function streamUpdate(current: StreamConfig): StreamConfig | undefined {
  const duplicateWindow = nanos(DUPLICATE_WINDOW_MS);
  if (current.duplicate_window === duplicateWindow && current.subjects.includes(ALL_SUBJECTS))
    return undefined;
  return {
    ...current,
    subjects: [...new Set([...current.subjects, ALL_SUBJECTS])],
    duplicate_window: duplicateWindow,
  };
}

/** A durable pull consumer of the stream. */
export interface DurableConsumer {
  /** Durable name; also the consumer group of its spans and the label of its metrics. */
  name: string;
  /** The subjects it receives (the embedded twin applies the same filter). */
  filterSubject: string;
  /** Deliveries of one message before JetStream gives up on it; -1 = never. */
  maxDeliver: number;
}

/** answers: triages each new ticket. A message that keeps failing stops after 10,000 deliveries. */
export const TRIAGE_CONSUMER: DurableConsumer = {
  name: 'answers-triage',
  filterSubject: 'tickets.created',
  maxDeliver: 10_000,
};

/**
 * answers: a person's category for a ticket joins the organization's triage training set. Never
 * given up: a label is kept until it is recorded.
 */
export const LABELS_CONSUMER: DurableConsumer = {
  name: 'answers-labels',
  filterSubject: 'tickets.category_changed',
  maxDeliver: -1,
};

/** digest: aggregates every type; an event is redelivered until it is applied. */
export const DIGEST_CONSUMER: DurableConsumer = {
  name: 'digest-aggregator',
  filterSubject: ALL_SUBJECTS,
  maxDeliver: -1,
};

/** Messages handed out and not yet settled, per consumer, before JetStream pauses it. */
const MAX_ACK_PENDING = 1_000;

/**
 * The settings of a durable consumer: explicit acks (nothing counts as handled before the
 * handler says so), every message from the stream's start, the filter and limits of `consumer`.
 */
export function consumerConfig(
  consumer: DurableConsumer,
  ackWaitMs: number,
): Partial<ConsumerConfig> {
  return {
    durable_name: consumer.name,
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(ackWaitMs),
    max_deliver: consumer.maxDeliver,
    deliver_policy: DeliverPolicy.All,
    filter_subject: consumer.filterSubject,
    max_ack_pending: MAX_ACK_PENDING,
  };
}

/**
 * Checks an existing durable consumer against the wanted settings: throws when it filters
 * another subject (then it belongs to something else: never repurposed), returns the change
 * when its ack wait or redelivery limit differ (configuration changed), else undefined.
 */
export function consumerUpdate(
  current: ConsumerConfig,
  wanted: Partial<ConsumerConfig>,
): Partial<ConsumerConfig> | undefined {
  if (current.filter_subject !== wanted.filter_subject) {
    throw new Error(
      `consumer ${wanted.durable_name} filters ${current.filter_subject ?? '(nothing)'}, expected ${wanted.filter_subject}`,
    );
  }
  if (current.ack_wait === wanted.ack_wait && current.max_deliver === wanted.max_deliver)
    return undefined;
  return { ack_wait: wanted.ack_wait, max_deliver: wanted.max_deliver };
}

/** The ephemeral ordered consumer of a replay: every subject, from sequence 1. */
export const REPLAY_CONSUMER: Partial<OrderedConsumerOptions> = {
  filterSubjects: ALL_SUBJECTS,
  deliver_policy: DeliverPolicy.StartSequence,
  opt_start_seq: 1,
};
