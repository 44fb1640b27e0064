import { createHash } from 'node:crypto';
import { sleep, type Logger } from '@support-agent/shared';
import { ticketCreated } from './events.js';
import type { IdempotencyClaim, TicketsDeps } from './ports.js';
import { openedTicket, type TicketDraft } from './ticket.js';
import { optionalText, requireOrgId, requireText } from './validation.js';

export const CONTENT_MAX = 4000;
export const AUTHOR_NAME_MAX = 200;
export const IDEMPOTENCY_KEY_MAX = 200;

/** How long the idempotency lock lives if its holder dies. */
const LOCK_TTL_MS = 10_000;
/**
 * How long a caller waits behind another one holding its key before going to the store itself
 * (whose unique key still gives both callers the one ticket). Well under a gRPC deadline: when
 * the holder was a replica that died, its client's retry is answered instead of waiting out
 * the lock (5 s here made every retry of such a key fail its 2.5–5 s deadline).
 */
const LOCK_WAIT_MS = 1_000;

export interface CreateTicketInput {
  orgId: string;
  content: string;
  authorName?: string | undefined;
  idempotencyKey?: string | undefined;
}

export interface CreateTicketResult {
  ticketId: number;
  duplicate: boolean;
}

/**
 * Opens a ticket, or returns the one that already holds the idempotency key in
 * this organization (duplicate = true, whatever the body: the first call wins).
 */
export async function createTicket(
  deps: TicketsDeps,
  input: CreateTicketInput,
  logger: Logger,
): Promise<CreateTicketResult> {
  const orgId = requireOrgId(input.orgId);
  const content = requireText(input.content, 'content', CONTENT_MAX);
  const authorName = optionalText(input.authorName, 'author_name', AUTHOR_NAME_MAX);
  const idempotencyKey = optionalText(input.idempotencyKey, 'idempotency_key', IDEMPOTENCY_KEY_MAX);

  const draft = openedTicket({ orgId, content, authorName, idempotencyKey }, deps.now());
  const result =
    idempotencyKey === null
      ? await insertTicket(deps, draft)
      : await createOnce(deps, draft, idempotencyKey, logger);
  if (!result.duplicate) logger.info({ orgId, ticketId: result.ticketId }, 'ticket created');
  return result;
}

/**
 * The idempotent path. The store's unique key on (org, key) is what guarantees one
 * ticket per key; the lock only makes concurrent callers wait for the first one
 * instead of all racing into the insert, and the cache answers replays without a
 * query. Any failure of the idempotency store falls back to the store alone.
 *
 * Round trips of a new key: one to the idempotency store (cache lookup + lock), the
 * insert transaction, one to the idempotency store (cache + unlock). Holding the lock
 * with nothing cached, the insert goes straight in: a ticket that already has the key
 * (cache expired or flushed) is caught by the unique key and answered as a duplicate.
 */
async function createOnce(
  deps: TicketsDeps,
  draft: TicketDraft,
  key: string,
  logger: Logger,
): Promise<CreateTicketResult> {
  const store = deps.idempotency;
  const keyHash = createHash('sha256').update(key).digest('hex');
  const { orgId } = draft;
  const fallback = (err: unknown) => {
    logger.debug({ err, orgId }, 'idempotency store unavailable; relying on the database alone');
    return insertTicket(deps, draft);
  };

  const waitUntil = Date.now() + LOCK_WAIT_MS;
  let delayMs = 5;
  for (;;) {
    let claim: IdempotencyClaim;
    try {
      claim = await store.claim(orgId, keyHash, LOCK_TTL_MS);
    } catch (err) {
      return fallback(err);
    }
    if (claim !== 'busy' && 'ticketId' in claim)
      return { ticketId: claim.ticketId, duplicate: true };
    if (claim !== 'busy') {
      let result: CreateTicketResult | undefined;
      try {
        result = await insertTicket(deps, draft, { checkExisting: false });
      } finally {
        // Cache the answer and release the lock together; on failure just release it.
        const settled =
          result === undefined
            ? store.unlock(orgId, keyHash, claim.token)
            : store.settle(orgId, keyHash, claim.token, result.ticketId);
        await settled.catch(() => undefined);
      }
      return result;
    }
    // Someone else is creating the ticket for this key: wait for their answer.
    if (Date.now() >= waitUntil) {
      logger.warn({ orgId }, 'idempotency lock held too long; relying on the database alone');
      return insertTicket(deps, draft);
    }
    await sleep(delayMs);
    delayMs = Math.min(delayMs * 2, 50);
  }
}

/**
 * Inserts the ticket with its tickets.created event, unless its idempotency key is taken.
 * `checkExisting: false` skips the lookup before the insert (the unique key still decides).
 */
async function insertTicket(
  deps: TicketsDeps,
  draft: TicketDraft,
  options: { checkExisting: boolean } = { checkExisting: true },
): Promise<CreateTicketResult> {
  if (draft.idempotencyKey !== null && options.checkExisting) {
    const existing = await deps.repo.findIdByIdempotencyKey(draft.orgId, draft.idempotencyKey);
    if (existing !== undefined) return { ticketId: existing, duplicate: true };
  }
  const outcome = await deps.repo.insert(draft, (ticket) => [ticketCreated(ticket)]);
  if (outcome.kind === 'duplicate') return { ticketId: outcome.ticketId, duplicate: true };
  deps.eventsWritten();
  return { ticketId: outcome.ticket.id, duplicate: false };
}
