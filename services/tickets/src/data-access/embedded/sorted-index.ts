import type { ListPosition, Ticket } from '../../domain/ticket.js';

/** Negative when `a` is older than `b` in (created_at, id) order. */
function oldestFirst(a: ListPosition, b: ListPosition): number {
  return a.createdAtMs - b.createdAtMs || a.id - b.id;
}

function positionOf(ticket: Ticket): ListPosition {
  return { createdAtMs: ticket.createdAt.getTime(), id: ticket.id };
}

/**
 * Tickets sorted by (created_at, id), so a page is a binary search to the cursor
 * plus a short walk rather than a scan of the organization. Stored oldest first:
 * new tickets, nearly always the newest, are appended.
 */
export class SortedTicketIndex {
  private readonly items: Ticket[] = [];

  get size(): number {
    return this.items.length;
  }

  add(ticket: Ticket): void {
    const pos = positionOf(ticket);
    const last = this.items[this.items.length - 1];
    if (!last || oldestFirst(positionOf(last), pos) < 0) this.items.push(ticket);
    else
      this.items.splice(
        this.search((item) => oldestFirst(positionOf(item), pos) > 0),
        0,
        ticket,
      );
  }

  remove(ticket: Ticket): void {
    const i = this.firstAtOrNewer(positionOf(ticket));
    if (this.items[i]?.id === ticket.id) this.items.splice(i, 1);
  }

  /** Tickets newest first, starting strictly after (older than) `after` when given. */
  *newestFirst(after: ListPosition | undefined): Generator<Ticket> {
    for (let i = (after ? this.firstAtOrNewer(after) : this.items.length) - 1; i >= 0; i--)
      yield this.items[i]!;
  }

  private firstAtOrNewer(pos: ListPosition): number {
    return this.search((item) => oldestFirst(positionOf(item), pos) >= 0);
  }

  /** First index whose item satisfies a predicate that is false, then true, along the array. */
  private search(predicate: (item: Ticket) => boolean): number {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (predicate(this.items[mid]!)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}
