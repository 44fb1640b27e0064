import { z } from 'zod';

/** The ticket event types the digest aggregates (DESIGN.md §4). */
export const AGGREGATED_TYPES = [
  'tickets.created',
  'tickets.triaged',
  'tickets.status_changed',
] as const;
export type AggregatedType = (typeof AGGREGATED_TYPES)[number];

const instant = z
  .string()
  .refine((s) => !Number.isNaN(Date.parse(s)), 'expected an RFC 3339 timestamp');
const optionalText = z
  .string()
  .nullish()
  .transform((v) => v ?? null);

const envelopeBase = {
  id: z.string().min(1).max(64),
  org_id: z.string().min(1).max(64),
  ticket_id: z.number().int().positive(),
  occurred_at: instant,
};

const createdData = z.object({
  content: z.string(),
  status: z.string().max(20).nullish(),
  category: optionalText,
  created_at: instant.nullish(),
});

const triagedData = z.object({
  category: optionalText,
  ai_summary: optionalText,
  // Not in the tickets envelope today; taken when a producer adds it.
  ai_answer: optionalText,
  answered: z.boolean().default(false),
  status: z.string().max(20).nullish(),
});

const statusChangedData = z.object({
  from: z.string().nullish(),
  to: z.string().min(1).max(20),
});

/** Parses the envelope of tickets' `src/domain/events.ts`; unknown data fields are ignored. */
export const ticketEventSchema = z.discriminatedUnion('type', [
  z.object({ ...envelopeBase, type: z.literal('tickets.created'), data: createdData }),
  z.object({ ...envelopeBase, type: z.literal('tickets.triaged'), data: triagedData }),
  z.object({ ...envelopeBase, type: z.literal('tickets.status_changed'), data: statusChangedData }),
]);

export type TicketEvent = z.infer<typeof ticketEventSchema>;

export type ParsedEvent =
  | { kind: 'event'; event: TicketEvent }
  | { kind: 'ignored'; type: string }
  | { kind: 'malformed'; reason: string };

/** Parses one message body: an aggregated event, another type (ignored), or garbage. */
export function parseTicketEvent(text: string): ParsedEvent {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { kind: 'malformed', reason: 'event is not JSON' };
  }
  const type = (json as { type?: unknown } | null)?.type;
  if (typeof type === 'string' && !(AGGREGATED_TYPES as readonly string[]).includes(type)) {
    return { kind: 'ignored', type };
  }
  const parsed = ticketEventSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      kind: 'malformed',
      reason: `${issue?.path.join('.') || 'event'}: ${issue?.message ?? 'invalid'}`,
    };
  }
  return { kind: 'event', event: parsed.data };
}
