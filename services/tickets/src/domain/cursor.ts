import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '@support-agent/shared';
import type { ListPosition, TicketFilters } from './ticket.js';

const VERSION = 1;
const MAX_CURSOR_LENGTH = 256;

interface CursorPayload {
  v: number;
  /** created_at of the last ticket of the page, epoch ms. */
  t: number;
  /**
   * Number (in its organization) of the last ticket of the page. Cursors made while ids came
   * from one counter for every organization carry that id, which the migration kept as the
   * ticket's number: they still point at the same place.
   */
  i: number;
  /** Fingerprint of the filters the cursor was made for. */
  f: string;
}

/**
 * Opaque, signed keyset cursors: `base64url(payload).base64url(hmac)`. The HMAC
 * covers the organization too, so a cursor made for another organization (or
 * forged, or for other filters) is rejected as invalid_cursor rather than
 * leaking or skipping rows.
 */
export class CursorCodec {
  constructor(private readonly secret: Buffer) {
    if (secret.length < 32) throw new Error('cursor secret must be at least 32 bytes');
  }

  encode(position: ListPosition, orgId: string, filters: TicketFilters): string {
    const payload: CursorPayload = {
      v: VERSION,
      t: position.createdAtMs,
      i: position.id,
      f: fingerprint(filters),
    };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${body}.${this.sign(orgId, body).toString('base64url')}`;
  }

  /** The position a cursor points at; throws invalid_cursor unless this service made it for this org and filters. */
  decode(cursor: string, orgId: string, filters: TicketFilters): ListPosition {
    const invalid = (why: string) =>
      new AppError('invalid_cursor', `cursor is invalid: ${why}`, { param: 'cursor' });
    if (cursor.length > MAX_CURSOR_LENGTH) throw invalid('not produced by this service');
    const [body, signature, extra] = cursor.split('.');
    if (!body || !signature || extra !== undefined) throw invalid('not produced by this service');
    const given = Buffer.from(signature, 'base64url');
    const expected = this.sign(orgId, body);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw invalid('not produced by this service for this organization');
    }
    let payload: Partial<CursorPayload>;
    try {
      payload = JSON.parse(
        Buffer.from(body, 'base64url').toString('utf8'),
      ) as Partial<CursorPayload>;
    } catch {
      throw invalid('not produced by this service');
    }
    if (
      payload.v !== VERSION ||
      !Number.isSafeInteger(payload.t) ||
      !Number.isSafeInteger(payload.i) ||
      typeof payload.f !== 'string'
    ) {
      throw invalid('unsupported cursor version');
    }
    if (payload.f !== fingerprint(filters)) {
      throw invalid('it was made for other filters; repeat the same status, priority and category');
    }
    return { createdAtMs: payload.t!, id: payload.i! };
  }

  private sign(orgId: string, body: string): Buffer {
    return createHmac('sha256', this.secret).update(`tickets-cursor\n${orgId}\n${body}`).digest();
  }
}

function fingerprint(filters: TicketFilters): string {
  const canonical = `${filters.status ?? ''}|${filters.priority ?? ''}|${filters.category ?? ''}`;
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 11);
}
