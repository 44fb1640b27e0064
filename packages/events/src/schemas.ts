// The envelope and the payload of each event type (DESIGN.md §4): the one definition the
// producer builds against and every consumer parses with. Evolution rule: docs/events.md.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { EVENT_TYPES, type TicketEventType } from './contract.js';

/**
 * The version each event type is at. Events written before the envelope carried a version
 * have none: they are version 1. A consumer terminates an event of a later version than it
 * knows (it cannot tell what changed), so consumers are upgraded before producers.
 */
export const CURRENT_VERSION = 1;

const instant = z
  .string()
  .refine((s) => !Number.isNaN(Date.parse(s)), 'expected an RFC 3339 timestamp');
/** Optional text: absent and null both read as null. */
const text = z
  .string()
  .nullish()
  .transform((v) => v ?? null);
const status = z.string().max(20);

/** The `data` of each type. Unknown fields are ignored (stripped) on parse. */
const payloads = {
  'tickets.created': z.object({
    content: z.string(),
    author_name: z.string().nullish(),
    status: status.nullish(),
    priority: z.string().nullish(),
    category: text,
    created_at: instant.nullish(),
  }),
  'tickets.triaged': z.object({
    category: text,
    priority: z.string().nullish(),
    ai_summary: text,
    answered: z.boolean().default(false),
    /** The automatic answer when `answered`, so the FAQ digest can quote it without a lookup. */
    ai_answer: text,
    status: status.nullish(),
  }),
  'tickets.status_changed': z.object({
    from: status.nullish(),
    to: status.min(1),
  }),
  /** A person set the ticket's category (staff side): the label triage learns from. */
  'tickets.category_changed': z.object({
    from: text,
    to: z.string().min(1).max(32),
    /** The ticket's text, so a consumer can learn from it without a lookup. */
    content: z.string(),
  }),
} satisfies Record<TicketEventType, z.ZodType>;

const ticketRef = z.number().int().positive();
const head = {
  id: z.string().min(1).max(64),
  version: z.number().int().positive().default(1),
  org_id: z.string().min(1).max(64),
  /** The ticket's platform-wide key: unique across organizations, never shown to them. */
  ticket_id: ticketRef,
  /**
   * The ticket's number in its organization: the `id` / `ticket_id` the API shows. Added after
   * version 1 was out: an event without it was written for a ticket whose number is its
   * `ticket_id` (the migration to per-organization numbers kept every existing ticket's id).
   */
  ticket_number: ticketRef.optional(),
  occurred_at: instant,
};

/** The envelope, discriminated by `type`; `ticket_number` filled in when absent. */
export const ticketEventSchema = z
  .discriminatedUnion('type', [
    z.object({ ...head, type: z.literal('tickets.created'), data: payloads['tickets.created'] }),
    z.object({ ...head, type: z.literal('tickets.triaged'), data: payloads['tickets.triaged'] }),
    z.object({
      ...head,
      type: z.literal('tickets.status_changed'),
      data: payloads['tickets.status_changed'],
    }),
    z.object({
      ...head,
      type: z.literal('tickets.category_changed'),
      data: payloads['tickets.category_changed'],
    }),
  ])
  .transform((e) => ({ ...e, ticket_number: e.ticket_number ?? e.ticket_id }));

/**
 * A parsed event, as consumers see it (version and ticket_number filled in, optional text as
 * null). What an organization knows a ticket by is `ticket_number`, never `ticket_id`.
 */
export type TicketEvent = z.output<typeof ticketEventSchema>;
export type TicketEventOf<T extends TicketEventType> = Extract<TicketEvent, { type: T }>;

/** The `data` a producer writes for type T. */
export type TicketEventData<T extends TicketEventType> = z.input<(typeof payloads)[T]>;

/** An envelope as the producer writes it (DESIGN.md §4, plus `version`). */
export interface TicketEnvelope<T extends TicketEventType = TicketEventType> {
  id: string;
  type: T;
  version: number;
  org_id: string;
  ticket_id: number;
  ticket_number: number;
  occurred_at: string;
  data: TicketEventData<T>;
}

/**
 * A new event of `type` with a fresh id at the current version, its `data` validated against
 * the type's schema. Throws when it does not match: a producer bug, so the write that would
 * record it fails instead of an event no consumer can read reaching the outbox. (The head is
 * checked as the envelope is published: a store may fill `ticket_id` and `ticket_number` in only
 * as it writes.)
 */
export function newTicketEvent<T extends TicketEventType>(
  type: T,
  head: { org_id: string; ticket_id: number; ticket_number: number; occurred_at: string },
  data: TicketEventData<T>,
): TicketEnvelope<T> {
  const parsed = payloads[type].safeParse(data);
  if (!parsed.success) throw new Error(`invalid ${type} data: ${firstIssue(parsed.error)}`);
  return { id: randomUUID(), type, version: CURRENT_VERSION, ...head, data };
}

export type ParsedEvent =
  | { kind: 'event'; event: TicketEvent }
  /** A type this contract does not know (added later): skipped, never an error. */
  | { kind: 'ignored'; type: string }
  /** Not an event of the contract; `id` and `type` when the body names them. */
  | { kind: 'malformed'; reason: string; id?: string; type?: string };

/** Parses one message body: an event of the contract, one of an unknown type, or garbage. */
export function parseTicketEvent(body: string): ParsedEvent {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { kind: 'malformed', reason: 'event is not JSON' };
  }
  const fields = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
  const type = typeof fields.type === 'string' ? fields.type : undefined;
  if (type !== undefined && !(EVENT_TYPES as readonly string[]).includes(type))
    return { kind: 'ignored', type };
  const malformed = (reason: string): ParsedEvent => ({
    kind: 'malformed',
    reason,
    ...(typeof fields.id === 'string' ? { id: fields.id.slice(0, 64) } : {}),
    ...(type !== undefined ? { type } : {}),
  });
  const parsed = ticketEventSchema.safeParse(json);
  if (!parsed.success) return malformed(firstIssue(parsed.error));
  if (parsed.data.version > CURRENT_VERSION)
    return malformed(`version ${parsed.data.version} of ${parsed.data.type} is not known here`);
  return { kind: 'event', event: parsed.data };
}

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  return `${issue?.path.join('.') || 'event'}: ${issue?.message ?? 'invalid'}`;
}
