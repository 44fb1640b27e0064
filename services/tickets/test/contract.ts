// The behaviour every tickets deployment must show, whatever its adapters. Run by
// tickets-mysql.test.ts (MariaDB + Redis + NATS) and tickets-embedded.test.ts (files only).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { tickets } from '@support-agent/proto';
import type { EventEnvelope as ContractEvent } from '../../../test/support/events.js';
import { assertAppError, codePoints, eventually, newOrg, type TicketsClient } from './helpers.js';

export type { EventEnvelope as ContractEvent } from '../../../test/support/events.js';

export interface ContractSetup {
  client: TicketsClient;
  /** Every event published for the org so far, in publication order. */
  readEvents(orgId: string): Promise<ContractEvent[]>;
  stop(): Promise<void>;
}

const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** All tickets of an org, paging through with the largest page. */
async function listAll(
  client: TicketsClient,
  request: Partial<tickets.ListTicketsRequest> & { orgId: string },
) {
  const all: tickets.Ticket[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTickets({ limit: 20, ...request, cursor });
    all.push(...page.tickets);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

/** `n` tickets of the org created one after the other, contents `${prefix} 0` …; their ids. */
async function createOneByOne(
  client: TicketsClient,
  orgId: string,
  n: number,
  prefix: string,
): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < n; i++)
    ids.push((await client.createTicket({ orgId, content: `${prefix} ${i}` })).ticketId);
  return ids;
}

function assertNewestFirst(list: tickets.Ticket[]): void {
  for (let i = 1; i < list.length; i++) {
    const a = list[i - 1]!;
    const b = list[i]!;
    const newer = a.createdAt > b.createdAt || (a.createdAt === b.createdAt && a.id > b.id);
    assert.ok(newer, `ticket ${a.id} (${a.createdAt}) should come before ${b.id} (${b.createdAt})`);
  }
}

export function ticketsContract(name: string, setup: () => Promise<ContractSetup>): void {
  describe(`tickets service (${name})`, () => {
    let s: ContractSetup;
    let client: TicketsClient;
    before(async () => {
      s = await setup();
      client = s.client;
    });
    after(() => s?.stop());

    describe('CreateTicket and GetTicket', () => {
      it('when a ticket is created, then GetTicket returns it open, medium, untriaged and verbatim', async () => {
        const orgId = newOrg();
        const content = '  Printer on fire 🔥\n<b>help</b>  ';
        const before = Date.now();
        const res = await client.createTicket({ orgId, content, authorName: 'Ada' });
        assert.equal(res.duplicate, false);
        assert.ok(res.ticketId > 0);
        const { ticket } = await client.getTicket({ orgId, ticketId: res.ticketId });
        assert.ok(ticket);
        assert.equal(ticket.id, res.ticketId);
        assert.equal(ticket.orgId, orgId);
        assert.equal(ticket.content, content);
        assert.equal(ticket.authorName, 'Ada');
        assert.equal(ticket.status, 'open');
        assert.equal(ticket.priority, 'medium');
        assert.equal(ticket.category, undefined);
        assert.equal(ticket.aiSummary, undefined);
        assert.equal(ticket.aiAnswer, undefined);
        assert.match(ticket.createdAt, RFC3339_MS);
        const createdMs = Date.parse(ticket.createdAt);
        assert.ok(createdMs >= before - 5 && createdMs <= Date.now() + 5, 'created_at is now');
        assert.equal(ticket.updatedAt, ticket.createdAt);
      });

      it('when the ticket belongs to another org or does not exist, then GetTicket is not_found', async () => {
        const orgId = newOrg();
        const { ticketId } = await client.createTicket({ orgId, content: 'mine' });
        await assertAppError(client.getTicket({ orgId: newOrg(), ticketId }), 'not_found');
        await assertAppError(
          client.getTicket({ orgId, ticketId: ticketId + 1_000_000 }),
          'not_found',
        );
      });

      it('when content is 4000 code points of emoji, then it is stored whole; at 4001, then invalid_request and nothing is written', async () => {
        const orgId = newOrg();
        const max = codePoints('😀', 4000);
        assert.equal(max.length, 8000, 'UTF-16 length is twice the code points');
        const ok = await client.createTicket({ orgId, content: max });
        const { ticket } = await client.getTicket({ orgId, ticketId: ok.ticketId });
        assert.equal(ticket?.content, max);

        const other = newOrg();
        await assertAppError(
          client.createTicket({ orgId: other, content: max + '😀' }),
          'invalid_request',
          'content',
        );
        await assertAppError(
          client.createTicket({ orgId: other, content: codePoints('a', 4001) }),
          'invalid_request',
          'content',
        );
        assert.deepEqual(await listAll(client, { orgId: other }), []);
      });

      it('when content is missing, empty or only white space, then invalid_request names content', async () => {
        const orgId = newOrg();
        for (const content of ['', '   ', '\n\t \u00a0']) {
          await assertAppError(
            client.createTicket({ orgId, content }),
            'invalid_request',
            'content',
          );
        }
        assert.deepEqual(await listAll(client, { orgId }), []);
      });

      it('when author_name is 200 code points, then it is kept; at 201, then invalid_request', async () => {
        const orgId = newOrg();
        const name = codePoints('𝒜', 200);
        const ok = await client.createTicket({ orgId, content: 'x', authorName: name });
        assert.equal(
          (await client.getTicket({ orgId, ticketId: ok.ticketId })).ticket?.authorName,
          name,
        );
        const other = newOrg();
        await assertAppError(
          client.createTicket({ orgId: other, content: 'x', authorName: name + '𝒜' }),
          'invalid_request',
          'author_name',
        );
        assert.deepEqual(await listAll(client, { orgId: other }), []);
      });

      it('when the idempotency key is 200 code points, then it works; at 201, then invalid_request and nothing is written', async () => {
        const orgId = newOrg();
        const key = codePoints('🔑', 200);
        const first = await client.createTicket({ orgId, content: 'a', idempotencyKey: key });
        const again = await client.createTicket({ orgId, content: 'a', idempotencyKey: key });
        assert.deepEqual(again, { ticketId: first.ticketId, duplicate: true });
        await assertAppError(
          client.createTicket({ orgId, content: 'b', idempotencyKey: key + '🔑' }),
          'invalid_request',
          'idempotency_key',
        );
        assert.equal((await listAll(client, { orgId })).length, 1);
      });

      it('when a key is repeated with another body, then the original ticket is returned and nothing is created', async () => {
        const orgId = newOrg();
        const first = await client.createTicket({
          orgId,
          content: 'first body',
          idempotencyKey: 'k-1',
        });
        const second = await client.createTicket({
          orgId,
          content: 'second body',
          authorName: 'Bob',
          idempotencyKey: 'k-1',
        });
        assert.deepEqual(second, { ticketId: first.ticketId, duplicate: true });
        const all = await listAll(client, { orgId });
        assert.equal(all.length, 1);
        assert.equal(all[0]?.content, 'first body');
      });

      it('when keys differ only in case, then they are different keys', async () => {
        const orgId = newOrg();
        const a = await client.createTicket({ orgId, content: 'a', idempotencyKey: 'Key' });
        const b = await client.createTicket({ orgId, content: 'b', idempotencyKey: 'key' });
        assert.notEqual(a.ticketId, b.ticketId);
        assert.equal(b.duplicate, false);
      });

      it('when one key is used in two orgs, then each org gets its own ticket', async () => {
        const [orgA, orgB] = [newOrg(), newOrg()];
        const a = await client.createTicket({
          orgId: orgA,
          content: 'a',
          idempotencyKey: 'shared-key',
        });
        const b = await client.createTicket({
          orgId: orgB,
          content: 'b',
          idempotencyKey: 'shared-key',
        });
        assert.equal(a.duplicate, false);
        assert.equal(b.duplicate, false);
        // Each org's first ticket: the same number, two tickets.
        assert.equal(
          (await client.getTicket({ orgId: orgA, ticketId: a.ticketId })).ticket?.content,
          'a',
        );
        assert.equal(
          (await client.getTicket({ orgId: orgB, ticketId: b.ticketId })).ticket?.content,
          'b',
        );
        const a2 = await client.createTicket({
          orgId: orgA,
          content: 'a2',
          idempotencyKey: 'shared-key',
        });
        assert.deepEqual(a2, { ticketId: a.ticketId, duplicate: true });
      });

      it('when 50 calls with one key run concurrently, then one ticket is created and 49 are duplicates of it', async () => {
        const orgId = newOrg();
        const results = await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            client.createTicket({ orgId, content: `body ${i}`, idempotencyKey: 'burst' }),
          ),
        );
        const ids = new Set(results.map((r) => r.ticketId));
        assert.equal(ids.size, 1);
        assert.equal(results.filter((r) => !r.duplicate).length, 1);
        assert.equal(results.filter((r) => r.duplicate).length, 49);
        assert.equal((await listAll(client, { orgId })).length, 1);
      });

      it('when org_id is missing, then invalid_request names org_id', async () => {
        await assertAppError(
          client.createTicket({ orgId: '', content: 'x' }),
          'invalid_request',
          'org_id',
        );
      });
    });

    describe('ticket numbers per organization', () => {
      it('when two organizations create tickets in turn, then each numbers its own 1, 2, 3… and a number names its own ticket in each of them', async () => {
        const [a, b] = [newOrg(), newOrg()];
        const turns = [a, b, a, a, b, a, b];
        const made: Array<{ orgId: string; content: string; ticketId: number }> = [];
        for (const [i, orgId] of turns.entries()) {
          const content = `${orgId === a ? 'A' : 'B'} ${i}`;
          made.push({ orgId, content, ...(await client.createTicket({ orgId, content })) });
        }
        const numbersOf = (orgId: string) =>
          made.filter((m) => m.orgId === orgId).map((m) => m.ticketId);
        assert.deepEqual(numbersOf(a), [1, 2, 3, 4]);
        assert.deepEqual(numbersOf(b), [1, 2, 3]);

        for (const m of made) {
          const { ticket } = await client.getTicket({ orgId: m.orgId, ticketId: m.ticketId });
          assert.equal(ticket?.content, m.content);
          assert.equal(ticket?.id, m.ticketId);
        }
        await assertAppError(client.getTicket({ orgId: b, ticketId: 4 }), 'not_found');
        for (const orgId of [a, b]) {
          const listed = await listAll(client, { orgId });
          assert.deepEqual(
            listed.map((t) => [t.id, t.content]),
            made
              .filter((m) => m.orgId === orgId)
              .reverse()
              .map((m) => [m.ticketId, m.content]),
          );
        }

        // A status change and a triage name the ticket by its number in the org.
        await client.updateTicketStatus({ orgId: b, ticketId: 2, status: 'in_progress' });
        await client.applyTriage({
          orgId: a,
          ticketId: 2,
          eventId: `numbers-${a}`,
          category: 'bug',
          priority: 'high',
          aiSummary: 'A two',
          resolve: false,
        });
        const [a2, b2] = await Promise.all([
          client.getTicket({ orgId: a, ticketId: 2 }),
          client.getTicket({ orgId: b, ticketId: 2 }),
        ]);
        assert.deepEqual(
          [a2.ticket?.content, a2.ticket?.status, a2.ticket?.category],
          ['A 2', 'open', 'bug'],
        );
        assert.deepEqual(
          [b2.ticket?.content, b2.ticket?.status, b2.ticket?.category],
          ['B 4', 'in_progress', undefined],
        );
        const inProgress = await listAll(client, { orgId: b, status: 'in_progress' });
        assert.deepEqual(
          inProgress.map((t) => t.id),
          [2],
        );
      });

      it('when 40 creates of one organization run at once, a key repeated among them, then the created tickets hold 1..n once each and every repeat answers its number', async () => {
        const orgId = newOrg();
        const results = await Promise.all(
          Array.from({ length: 40 }, (_, i) =>
            client.createTicket({
              orgId,
              content: `burst ${i}`,
              idempotencyKey: i % 4 === 0 ? 'one-key' : `key-${i}`,
            }),
          ),
        );
        const created = results.filter((r) => !r.duplicate).map((r) => r.ticketId);
        assert.deepEqual(
          [...created].sort((x, y) => x - y),
          Array.from({ length: 31 }, (_, i) => i + 1),
        );
        const keyed = results.filter((_, i) => i % 4 === 0);
        assert.equal(new Set(keyed.map((r) => r.ticketId)).size, 1);
        const again = await client.createTicket({
          orgId,
          content: 'later',
          idempotencyKey: 'one-key',
        });
        assert.deepEqual(again, { ticketId: keyed[0]!.ticketId, duplicate: true });
        const next = await client.createTicket({ orgId, content: 'next' });
        assert.deepEqual(next, { ticketId: 32, duplicate: false });
      });

      it('when tickets of two organizations are created and changed, then their events carry the number as ticket_number and a ticket_id no other ticket has', async () => {
        const [a, b] = [newOrg(), newOrg()];
        const ta = await client.createTicket({ orgId: a, content: 'event A' });
        const tb = await client.createTicket({ orgId: b, content: 'event B' });
        assert.deepEqual([ta.ticketId, tb.ticketId], [1, 1]);
        await client.updateTicketStatus({ orgId: b, ticketId: 1, status: 'in_progress' });
        const events = await eventually(
          async () => {
            const all = [...(await s.readEvents(a)), ...(await s.readEvents(b))];
            return all.length >= 3 ? all : undefined;
          },
          10_000,
          'three events',
        );
        assert.deepEqual(
          events.map((e) => [e.org_id, e.type, e.ticket_number]),
          [
            [a, 'tickets.created', 1],
            [b, 'tickets.created', 1],
            [b, 'tickets.status_changed', 1],
          ],
        );
        const [ea, eb, ebStatus] = events;
        assert.notEqual(ea!.ticket_id, eb!.ticket_id);
        assert.equal(eb!.ticket_id, ebStatus!.ticket_id);
      });
    });

    describe('ListTickets', () => {
      it('when 55 tickets are paged 20 at a time, then pages hold 20, 20, 15, newest first, without gaps or repeats even as tickets are created between pages', async () => {
        const orgId = newOrg();
        const created: number[] = [];
        // Batches of concurrent creates: many tickets share a millisecond, exercising the id tie-break.
        for (let batch = 0; batch < 5; batch++) {
          const res = await Promise.all(
            Array.from({ length: 11 }, (_, i) =>
              client.createTicket({ orgId, content: `t${batch}-${i}` }),
            ),
          );
          created.push(...res.map((r) => r.ticketId));
        }
        const p1 = await client.listTickets({ orgId, limit: 20 });
        assert.equal(p1.tickets.length, 20);
        assert.ok(p1.nextCursor);
        // New tickets arrive between pages: they are newer than the cursor and must not shift later pages.
        for (let i = 0; i < 3; i++) await client.createTicket({ orgId, content: `late ${i}` });
        const p2 = await client.listTickets({ orgId, limit: 20, cursor: p1.nextCursor });
        assert.equal(p2.tickets.length, 20);
        assert.ok(p2.nextCursor);
        await client.createTicket({ orgId, content: 'later still' });
        const p3 = await client.listTickets({ orgId, limit: 20, cursor: p2.nextCursor });
        assert.equal(p3.tickets.length, 15);
        assert.equal(p3.nextCursor, undefined);

        const seen = [...p1.tickets, ...p2.tickets, ...p3.tickets];
        assertNewestFirst(seen);
        assert.deepEqual(
          seen.map((t) => t.id).sort((a, b) => a - b),
          [...created].sort((a, b) => a - b),
        );
        for (const t of seen) assert.match(t.createdAt, RFC3339_MS);

        // The first page now starts with the tickets created meanwhile.
        const fresh = await client.listTickets({ orgId, limit: 4 });
        assert.deepEqual(
          fresh.tickets.map((t) => t.content),
          ['later still', 'late 2', 'late 1', 'late 0'],
        );
      });

      it('when limit is 0, then 10 tickets come back; when it is outside 1..20, then invalid_request names limit', async () => {
        const orgId = newOrg();
        for (let i = 0; i < 12; i++) await client.createTicket({ orgId, content: `n${i}` });
        const page = await client.listTickets({ orgId, limit: 0 });
        assert.equal(page.tickets.length, 10);
        assert.ok(page.nextCursor);
        assert.equal((await client.listTickets({ orgId, limit: 20 })).tickets.length, 12);
        assert.equal((await client.listTickets({ orgId, limit: 1 })).tickets.length, 1);
        for (const limit of [21, -1, 1000]) {
          await assertAppError(client.listTickets({ orgId, limit }), 'invalid_request', 'limit');
        }
      });

      it('when an org has no tickets, then the list is empty and has no cursor', async () => {
        const page = await client.listTickets({ orgId: newOrg(), limit: 0 });
        assert.deepEqual(page.tickets, []);
        assert.equal(page.nextCursor, undefined);
      });

      it('when exactly a page of tickets exists, then next_cursor is absent', async () => {
        const orgId = newOrg();
        for (let i = 0; i < 5; i++) await client.createTicket({ orgId, content: `e${i}` });
        const page = await client.listTickets({ orgId, limit: 5 });
        assert.equal(page.tickets.length, 5);
        assert.equal(page.nextCursor, undefined);
      });

      it('when a filter value is not allowed, then invalid_request names the parameter', async () => {
        const orgId = newOrg();
        await assertAppError(
          client.listTickets({ orgId, limit: 0, status: 'pending' }),
          'invalid_request',
          'status',
        );
        await assertAppError(
          client.listTickets({ orgId, limit: 0, priority: 'urgent' }),
          'invalid_request',
          'priority',
        );
        await assertAppError(
          client.listTickets({ orgId, limit: 0, category: 'bug!' }),
          'invalid_request',
          'category',
        );
      });

      it('when a cursor is tampered with, forged, or made for another org or other filters, then invalid_cursor', async () => {
        const orgId = newOrg();
        for (let i = 0; i < 3; i++) await client.createTicket({ orgId, content: `c${i}` });
        const { nextCursor } = await client.listTickets({ orgId, limit: 1 });
        assert.ok(nextCursor);
        const [body, sig] = nextCursor.split('.') as [string, string];
        const payload = JSON.parse(Buffer.from(body, 'base64url').toString()) as { i: number };
        const forgedBody = Buffer.from(JSON.stringify({ ...payload, i: payload.i + 1 })).toString(
          'base64url',
        );
        const flipped = sig.slice(0, -2) + (sig.endsWith('AA') ? 'BB' : 'AA');
        for (const cursor of [
          `${forgedBody}.${sig}`,
          `${body}.${flipped}`,
          'garbage',
          `${body}`,
          `${nextCursor}.x`,
          'a'.repeat(5000),
        ]) {
          await assertAppError(
            client.listTickets({ orgId, limit: 1, cursor }),
            'invalid_cursor',
            'cursor',
          );
        }
        await assertAppError(
          client.listTickets({ orgId: newOrg(), limit: 1, cursor: nextCursor }),
          'invalid_cursor',
          'cursor',
        );
        await assertAppError(
          client.listTickets({ orgId, limit: 1, status: 'open', cursor: nextCursor }),
          'invalid_cursor',
          'cursor',
        );
        // The genuine cursor still works, with another page size too.
        assert.equal(
          (await client.listTickets({ orgId, limit: 5, cursor: nextCursor })).tickets.length,
          2,
        );
      });

      it('when filters are combined, then only tickets matching all of them are listed, paged with their own cursor', async () => {
        const orgId = newOrg();
        const make = async (category: string, priority: string, status?: string) => {
          const { ticketId } = await client.createTicket({
            orgId,
            content: `${category}/${priority}/${status ?? 'open'}`,
          });
          await client.applyTriage({
            orgId,
            ticketId,
            eventId: `ev-${orgId}-${ticketId}`,
            category,
            priority,
            aiSummary: 's',
            resolve: false,
          });
          if (status) await client.updateTicketStatus({ orgId, ticketId, status });
          return ticketId;
        };
        const bugHighOpen = [
          await make('bug', 'high'),
          await make('bug', 'high'),
          await make('bug', 'high'),
        ];
        await make('bug', 'low');
        await make('how_to', 'high');
        await make('bug', 'high', 'in_progress');
        await client.createTicket({ orgId, content: 'untriaged' });

        const both = await listAll(client, {
          orgId,
          category: 'bug',
          priority: 'high',
          status: 'open',
          limit: 2,
        });
        assert.deepEqual(both.map((t) => t.id).sort(), [...bugHighOpen].sort());
        assert.equal((await listAll(client, { orgId, category: 'bug' })).length, 5);
        assert.equal((await listAll(client, { orgId, priority: 'high' })).length, 5);
        assert.equal((await listAll(client, { orgId, status: 'in_progress' })).length, 1);
        assert.equal((await listAll(client, { orgId, status: 'open' })).length, 6);
        assert.equal((await listAll(client, { orgId, priority: 'medium' })).length, 1);
        assert.equal((await listAll(client, { orgId, category: 'documentation' })).length, 0);
        assert.equal((await listAll(client, { orgId, status: 'duplicate' })).length, 0);
        for (const t of both) {
          assert.equal(t.category, 'bug');
          assert.equal(t.priority, 'high');
          assert.equal(t.status, 'open');
        }
      });

      it('when two orgs have tickets, then each lists only its own', async () => {
        const [a, b] = [newOrg(), newOrg()];
        await client.createTicket({ orgId: a, content: 'a' });
        await client.createTicket({ orgId: b, content: 'b' });
        const listA = await listAll(client, { orgId: a });
        assert.deepEqual(
          listA.map((t) => t.content),
          ['a'],
        );
      });
    });

    describe('UpdateTicketStatus', () => {
      it('when moved along open → in_progress → resolved → open → in_progress → resolved → closed, then each step is applied', async () => {
        const orgId = newOrg();
        const { ticketId } = await client.createTicket({ orgId, content: 'walk' });
        for (const status of [
          'in_progress',
          'resolved',
          'open',
          'in_progress',
          'resolved',
          'closed',
        ]) {
          const { ticket } = await client.updateTicketStatus({ orgId, ticketId, status });
          assert.equal(ticket?.status, status);
          assert.ok(ticket && ticket.updatedAt >= ticket.createdAt);
        }
        assert.equal((await client.getTicket({ orgId, ticketId })).ticket?.status, 'closed');
      });

      it('when a transition is not allowed, then conflict names both statuses and the ticket is unchanged', async () => {
        const orgId = newOrg();
        const { ticketId } = await client.createTicket({ orgId, content: 'c' });
        const err = await assertAppError(
          client.updateTicketStatus({ orgId, ticketId, status: 'closed' }),
          'conflict',
        );
        assert.match(err.message, /cannot move a ticket from open to closed/);
        await assertAppError(
          client.updateTicketStatus({ orgId, ticketId, status: 'resolved' }),
          'conflict',
        );
        await client.updateTicketStatus({ orgId, ticketId, status: 'in_progress' });
        await assertAppError(
          client.updateTicketStatus({ orgId, ticketId, status: 'open' }),
          'conflict',
        );
        await assertAppError(
          client.updateTicketStatus({ orgId, ticketId, status: 'closed' }),
          'conflict',
        );
        assert.equal((await client.getTicket({ orgId, ticketId })).ticket?.status, 'in_progress');
      });

      it('when any non-closed ticket is marked duplicate, then it is; closed and duplicate tickets cannot move', async () => {
        const orgId = newOrg();
        for (const path of [[], ['in_progress'], ['in_progress', 'resolved']]) {
          const { ticketId } = await client.createTicket({ orgId, content: 'd' });
          for (const status of path) await client.updateTicketStatus({ orgId, ticketId, status });
          const { ticket } = await client.updateTicketStatus({
            orgId,
            ticketId,
            status: 'duplicate',
          });
          assert.equal(ticket?.status, 'duplicate');
          for (const status of ['open', 'in_progress', 'resolved', 'closed']) {
            await assertAppError(
              client.updateTicketStatus({ orgId, ticketId, status }),
              'conflict',
            );
          }
        }
        const { ticketId } = await client.createTicket({ orgId, content: 'closed one' });
        for (const status of ['in_progress', 'resolved', 'closed'])
          await client.updateTicketStatus({ orgId, ticketId, status });
        await assertAppError(
          client.updateTicketStatus({ orgId, ticketId, status: 'duplicate' }),
          'conflict',
        );
        await assertAppError(
          client.updateTicketStatus({ orgId, ticketId, status: 'open' }),
          'conflict',
        );
      });

      it('when the status is unchanged, then the ticket is returned as it was and no event is written', async () => {
        const orgId = newOrg();
        const { ticketId } = await client.createTicket({ orgId, content: 'same' });
        const before = (await client.getTicket({ orgId, ticketId })).ticket;
        const { ticket } = await client.updateTicketStatus({ orgId, ticketId, status: 'open' });
        assert.deepEqual(ticket, before);
        await eventually(
          async () => ((await s.readEvents(orgId)).length >= 1 ? true : undefined),
          10_000,
          'created event',
        );
        assert.deepEqual(
          (await s.readEvents(orgId)).map((e) => e.type),
          ['tickets.created'],
        );
      });

      it('when the status value is unknown, then invalid_request names status; unknown ticket or other org, then not_found', async () => {
        const orgId = newOrg();
        const { ticketId } = await client.createTicket({ orgId, content: 'x' });
        await assertAppError(
          client.updateTicketStatus({ orgId, ticketId, status: 'done' }),
          'invalid_request',
          'status',
        );
        await assertAppError(
          client.updateTicketStatus({ orgId, ticketId, status: '' }),
          'invalid_request',
          'status',
        );
        await assertAppError(
          client.updateTicketStatus({ orgId: newOrg(), ticketId, status: 'in_progress' }),
          'not_found',
        );
        await assertAppError(
          client.updateTicketStatus({ orgId, ticketId: 987_654_321, status: 'in_progress' }),
          'not_found',
        );
        assert.equal((await client.getTicket({ orgId, ticketId })).ticket?.status, 'open');
      });
    });

    describe('SetTicketCategory', () => {
      it("when a person sets a ticket's category, then it is recorded with a category_changed event carrying the text; the same category again is a no-op", async () => {
        const orgId = newOrg();
        const { ticketId } = await client.createTicket({ orgId, content: 'my invoice is wrong' });
        const { ticket } = await client.setTicketCategory({
          orgId,
          ticketId,
          category: 'Billing & Payments',
        });
        assert.equal(ticket?.category, 'Billing & Payments');
        await client.setTicketCategory({ orgId, ticketId, category: 'Billing & Payments' });
        const events = await eventually(
          async () => {
            const e = await s.readEvents(orgId);
            return e.length >= 2 ? e : undefined;
          },
          10_000,
          'category_changed event',
        );
        assert.deepEqual(
          events.map((e) => e.type),
          ['tickets.created', 'tickets.category_changed'],
        );
        assert.deepEqual(events[1]!.data, {
          from: null,
          to: 'Billing & Payments',
          content: 'my invoice is wrong',
        });
      });

      it('when the category is not a name of the form, then invalid_request; unknown ticket, then not_found', async () => {
        const orgId = newOrg();
        const { ticketId } = await client.createTicket({ orgId, content: 'x' });
        await assertAppError(
          client.setTicketCategory({ orgId, ticketId, category: 'bug!' }),
          'invalid_request',
          'category',
        );
        await assertAppError(
          client.setTicketCategory({ orgId, ticketId: 987_654_321, category: 'bug' }),
          'not_found',
        );
        assert.equal((await client.getTicket({ orgId, ticketId })).ticket?.category, undefined);
      });
    });

    describe('ApplyTriage', () => {
      it('when triage is applied, then labels and answer are set; when the same event comes again, then applied is false and nothing changes', async () => {
        const orgId = newOrg();
        const { ticketId } = await client.createTicket({ orgId, content: 'how do I export?' });
        const first = await client.applyTriage({
          orgId,
          ticketId,
          eventId: 'ev-1',
          category: 'how_to',
          priority: 'low',
          aiSummary: 'Export question',
          resolve: false,
        });
        assert.equal(first.applied, true);
        assert.equal(first.ticket?.category, 'how_to');
        assert.equal(first.ticket?.priority, 'low');
        assert.equal(first.ticket?.aiSummary, 'Export question');
        assert.equal(first.ticket?.aiAnswer, undefined);
        assert.equal(first.ticket?.status, 'open');

        const repeat = await client.applyTriage({
          orgId,
          ticketId,
          eventId: 'ev-1',
          category: 'bug',
          priority: 'critical',
          aiSummary: 'other',
          aiAnswer: 'x',
          resolve: true,
        });
        assert.equal(repeat.applied, false);
        assert.deepEqual(repeat.ticket, first.ticket);
        assert.deepEqual((await client.getTicket({ orgId, ticketId })).ticket, first.ticket);
      });

      it('when triage resolves an open ticket with an answer, then it becomes resolved and triaged + status_changed events follow the created one', async () => {
        const orgId = newOrg();
        const { ticketId } = await client.createTicket({ orgId, content: 'reset password?' });
        const res = await client.applyTriage({
          orgId,
          ticketId,
          eventId: 'ev-r',
          category: 'how_to',
          priority: 'medium',
          aiSummary: 'Password reset',
          aiAnswer: 'Use the reset link.',
          resolve: true,
        });
        assert.equal(res.ticket?.status, 'resolved');
        assert.equal(res.ticket?.aiAnswer, 'Use the reset link.');
        const events = await eventually(
          async () => {
            const e = await s.readEvents(orgId);
            return e.length >= 3 ? e : undefined;
          },
          10_000,
          'three events',
        );
        assert.deepEqual(
          events.map((e) => e.type),
          ['tickets.created', 'tickets.triaged', 'tickets.status_changed'],
        );
        assert.deepEqual(events[1]?.data, {
          category: 'how_to',
          priority: 'medium',
          ai_summary: 'Password reset',
          answered: true,
          ai_answer: 'Use the reset link.',
          status: 'resolved',
        });
        assert.deepEqual(events[2]?.data, { from: 'open', to: 'resolved' });
        for (const e of events) assert.equal(e.ticket_number, ticketId);
      });

      it('when resolve is set but the ticket is no longer open, then labels change and the status does not', async () => {
        const orgId = newOrg();
        const { ticketId } = await client.createTicket({ orgId, content: 'busy' });
        await client.updateTicketStatus({ orgId, ticketId, status: 'in_progress' });
        const res = await client.applyTriage({
          orgId,
          ticketId,
          eventId: 'ev-b',
          category: 'bug',
          priority: 'high',
          aiSummary: 's',
          aiAnswer: 'a',
          resolve: true,
        });
        assert.equal(res.applied, true);
        assert.equal(res.ticket?.status, 'in_progress');
        assert.equal(res.ticket?.category, 'bug');
      });

      it('when category is not a category name or priority is not allowed, or the ticket is unknown, then the call fails and nothing is recorded', async () => {
        const orgId = newOrg();
        const { ticketId } = await client.createTicket({ orgId, content: 'x' });
        const base = {
          orgId,
          ticketId,
          eventId: 'ev-v',
          category: 'bug',
          priority: 'high',
          aiSummary: 's',
          resolve: false,
        };
        await assertAppError(
          client.applyTriage({ ...base, category: ' not a name' }),
          'invalid_request',
          'category',
        );
        await assertAppError(
          client.applyTriage({ ...base, priority: 'urgent' }),
          'invalid_request',
          'priority',
        );
        await assertAppError(
          client.applyTriage({ ...base, eventId: '' }),
          'invalid_request',
          'event_id',
        );
        await assertAppError(client.applyTriage({ ...base, orgId: newOrg() }), 'not_found');
        // None of the failures used up the event id.
        assert.equal((await client.applyTriage(base)).applied, true);
      });
    });

    describe('ApplyTriage under load', () => {
      it('when triage results for many tickets, each sent twice, arrive at once with one for an unknown ticket, then each ticket is triaged once, the repeat reports applied false, and only the unknown one fails', async () => {
        const orgId = newOrg();
        const ids = await createOneByOne(client, orgId, 20, 'question');
        const triage = (ticketId: number, i: number) => ({
          orgId,
          ticketId,
          eventId: `ev-load-${ticketId}`,
          category: 'how_to',
          priority: i % 2 === 0 ? 'low' : 'high',
          aiSummary: `summary ${i}`,
          aiAnswer: i % 4 === 0 ? `answer ${i}` : undefined,
          resolve: i % 4 === 0,
        });
        const calls = [
          ...ids.map((id, i) => client.applyTriage(triage(id, i))),
          client.applyTriage(triage(ids[ids.length - 1]! + 1_000_000, 0)),
          ...ids.map((id, i) => client.applyTriage(triage(id, i))),
        ];
        const results = await Promise.allSettled(calls);
        const unknown = results[ids.length]!;
        assert.equal(unknown.status, 'rejected');
        await assertAppError(
          Promise.reject((unknown as PromiseRejectedResult).reason),
          'not_found',
        );
        for (let i = 0; i < ids.length; i++) {
          const first = results[i]!;
          const repeat = results[ids.length + 1 + i]!;
          assert.ok(first.status === 'fulfilled' && repeat.status === 'fulfilled');
          assert.deepEqual(
            [first.value.applied, repeat.value.applied].sort(),
            [false, true],
            `ticket ${ids[i]}: applied once`,
          );
          const ticket = (await client.getTicket({ orgId, ticketId: ids[i]! })).ticket!;
          assert.equal(ticket.aiSummary, `summary ${i}`);
          assert.equal(ticket.priority, i % 2 === 0 ? 'low' : 'high');
          assert.equal(ticket.status, i % 4 === 0 ? 'resolved' : 'open');
        }
        const events = await eventually(
          async () => {
            const e = await s.readEvents(orgId);
            return e.filter((x) => x.type !== 'tickets.created').length >= 25 ? e : undefined;
          },
          10_000,
          'the triage events',
        );
        await new Promise((r) => setTimeout(r, 500));
        const after = await s.readEvents(orgId);
        assert.equal(after.length, events.length, 'no more events than that');
        for (const id of ids) {
          const mine = after.filter((e) => e.ticket_number === id).map((e) => e.type);
          const resolved = ids.indexOf(id) % 4 === 0;
          assert.deepEqual(
            mine,
            resolved
              ? ['tickets.created', 'tickets.triaged', 'tickets.status_changed']
              : ['tickets.created', 'tickets.triaged'],
            `events of ticket ${id}`,
          );
        }
      });
    });

    describe('CreateTicketBatch', () => {
      it('when creates arrive in one batch with a repeated key, a used key and an invalid one, then each is answered as CreateTicket would answer it and one ticket and event exist per key', async () => {
        const orgId = newOrg();
        const used = await client.createTicket({
          orgId,
          content: 'first',
          idempotencyKey: 'k-used',
        });
        const { results } = await client.createTicketBatch({
          tickets: [
            { orgId, content: 'plain one', authorName: 'Ann' },
            { orgId, content: 'keyed', idempotencyKey: 'k-new' },
            { orgId, content: 'keyed again', idempotencyKey: 'k-new' },
            { orgId, content: 'replay', idempotencyKey: 'k-used' },
            { orgId, content: '   ' },
            { orgId, content: 'plain two' },
          ],
          traceparents: [],
        });
        assert.deepEqual(
          results.map((r) => [r.duplicate, r.errorCode, r.errorParam]),
          [
            [false, '', ''],
            [false, '', ''],
            [true, '', ''],
            [true, '', ''],
            [false, 'invalid_request', 'content'],
            [false, '', ''],
          ],
        );
        assert.equal(results[2]!.ticketId, results[1]!.ticketId, 'one ticket per key');
        assert.equal(results[3]!.ticketId, used.ticketId);
        assert.equal(results[4]!.ticketId, 0);
        const created = [0, 1, 5].map((i) => results[i]!.ticketId);
        assert.equal(new Set(created).size, 3);
        const listed = await listAll(client, { orgId });
        assert.deepEqual(
          listed.map((t) => [t.id, t.content, t.authorName]).sort(),
          [
            [used.ticketId, 'first', undefined],
            [created[0], 'plain one', 'Ann'],
            [created[1], 'keyed', undefined],
            [created[2], 'plain two', undefined],
          ].sort(),
        );
        const events = await eventually(
          async () => {
            const e = await s.readEvents(orgId);
            return e.length >= 4 ? e : undefined;
          },
          10_000,
          'the created events',
        );
        await new Promise((r) => setTimeout(r, 300));
        assert.equal((await s.readEvents(orgId)).length, events.length, 'no more events than that');
        assert.deepEqual(
          events.map((e) => e.ticket_number).sort(),
          [used.ticketId, ...created].sort(),
        );
      });

      it('when a batch holds no create or more than 64, then the call fails with invalid_request and nothing is created', async () => {
        const orgId = newOrg();
        const one = { orgId, content: 'over' };
        await assertAppError(
          client.createTicketBatch({ tickets: [], traceparents: [] }),
          'invalid_request',
          'tickets',
        );
        await assertAppError(
          client.createTicketBatch({
            tickets: Array.from({ length: 65 }, () => one),
            traceparents: [],
          }),
          'invalid_request',
          'tickets',
        );
        assert.deepEqual(await listAll(client, { orgId }), []);
      });
    });

    describe('ApplyTriageBatch', () => {
      it('when results arrive in one batch with a repeat, an unknown ticket and an invalid one, then each is answered as ApplyTriage would answer it and the others are applied once', async () => {
        const orgId = newOrg();
        const ids = await createOneByOne(client, orgId, 3, 'batch');
        const result = (ticketId: number, i: number) => ({
          orgId,
          ticketId,
          eventId: `ev-batch-${ticketId}`,
          category: 'how_to',
          priority: 'medium',
          aiSummary: `summary ${i}`,
          aiAnswer: i === 0 ? 'Use the reset link.' : undefined,
          resolve: i === 0,
        });
        const { results } = await client.applyTriageBatch({
          results: [
            ...ids.map(result),
            result(ids[0]!, 0),
            result(ids[2]! + 1_000_000, 1),
            { ...result(ids[1]!, 1), eventId: 'ev-bad', priority: 'urgent' },
          ],
        });
        assert.deepEqual(
          results.map((r) => [r.applied, r.errorCode, r.errorParam]),
          [
            [true, '', ''],
            [true, '', ''],
            [true, '', ''],
            [false, '', ''],
            [false, 'not_found', ''],
            [false, 'invalid_request', 'priority'],
          ],
        );
        for (const [i, id] of ids.entries()) {
          const ticket = (await client.getTicket({ orgId, ticketId: id })).ticket!;
          assert.deepEqual(
            [ticket.aiSummary, ticket.priority, ticket.status, ticket.aiAnswer],
            [`summary ${i}`, 'medium', i === 0 ? 'resolved' : 'open', result(id, i).aiAnswer],
          );
        }
        const events = await eventually(
          async () => {
            const e = await s.readEvents(orgId);
            return e.length >= 7 ? e : undefined;
          },
          10_000,
          'the triage events',
        );
        await new Promise((r) => setTimeout(r, 300));
        const after = await s.readEvents(orgId);
        assert.equal(after.length, events.length, 'no more events than that');
        const key = (type: string, id: number) => `${id} ${type}`;
        assert.deepEqual(
          after
            .filter((e) => e.type !== 'tickets.created')
            .map((e) => key(e.type, e.ticket_number!))
            .sort(),
          [
            key('tickets.triaged', ids[0]!),
            key('tickets.status_changed', ids[0]!),
            key('tickets.triaged', ids[1]!),
            key('tickets.triaged', ids[2]!),
          ].sort(),
        );
      });

      it('when a batch holds no result or more than 64, then the call fails with invalid_request and nothing is applied', async () => {
        const orgId = newOrg();
        const { ticketId } = await client.createTicket({ orgId, content: 'x' });
        const one = {
          orgId,
          ticketId,
          eventId: 'ev-over',
          category: 'bug',
          priority: 'high',
          aiSummary: 's',
          resolve: false,
        };
        await assertAppError(
          client.applyTriageBatch({ results: [] }),
          'invalid_request',
          'results',
        );
        await assertAppError(
          client.applyTriageBatch({ results: Array.from({ length: 65 }, () => one) }),
          'invalid_request',
          'results',
        );
        assert.equal((await client.getTicket({ orgId, ticketId })).ticket?.category, undefined);
      });
    });

    describe('ApplyTriage and status changes together', () => {
      it('when status changes that are not allowed arrive together with triage results for the same tickets, then only they fail', async () => {
        const orgId = newOrg();
        const ids = await createOneByOne(client, orgId, 5, 'together');
        const results = await Promise.allSettled(
          ids.flatMap((ticketId) => [
            client.updateTicketStatus({ orgId, ticketId, status: 'closed' }),
            client.applyTriage({
              orgId,
              ticketId,
              eventId: `ev-together-${ticketId}`,
              category: 'bug',
              priority: 'high',
              aiSummary: 'together',
              resolve: false,
            }),
          ]),
        );
        for (let i = 0; i < ids.length; i++) {
          const status = results[2 * i]!;
          assert.equal(status.status, 'rejected');
          await assertAppError(
            Promise.reject((status as PromiseRejectedResult).reason),
            'conflict',
          );
          const triage = results[2 * i + 1] as PromiseSettledResult<tickets.ApplyTriageResponse>;
          assert.ok(triage.status === 'fulfilled' && triage.value.applied);
          const ticket = (await client.getTicket({ orgId, ticketId: ids[i]! })).ticket!;
          assert.deepEqual([ticket.status, ticket.category], ['open', 'bug']);
        }
      });
    });

    describe('events', () => {
      it('when tickets are created, then each produces exactly one tickets.created event carrying the ticket', async () => {
        const orgId = newOrg();
        const ids: number[] = [];
        for (let i = 0; i < 5; i++) {
          ids.push(
            (
              await client.createTicket({
                orgId,
                content: `ev ${i}`,
                authorName: i === 0 ? 'Eve' : undefined,
              })
            ).ticketId,
          );
        }
        // Replays create no event.
        await client.createTicket({ orgId, content: 'dup', idempotencyKey: 'e-k' });
        await client.createTicket({ orgId, content: 'dup', idempotencyKey: 'e-k' });
        const events = await eventually(
          async () => {
            const e = await s.readEvents(orgId);
            return e.length >= 6 ? e : undefined;
          },
          10_000,
          'six created events',
        );
        // Give a straggler (a double publication) the chance to show up before counting.
        await new Promise((r) => setTimeout(r, 300));
        const final = await s.readEvents(orgId);
        assert.equal(final.length, 6);
        assert.equal(new Set(final.map((e) => e.id)).size, 6);
        assert.deepEqual(new Set(final.map((e) => e.type)), new Set(['tickets.created']));
        const first = events.find((e) => e.ticket_number === ids[0]);
        assert.ok(first);
        const { ticket } = await client.getTicket({ orgId, ticketId: ids[0]! });
        assert.match(
          first.id,
          /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
        );
        assert.equal(first.org_id, orgId);
        assert.match(first.occurred_at, RFC3339_MS);
        assert.deepEqual(first.data, {
          content: 'ev 0',
          author_name: 'Eve',
          status: 'open',
          priority: 'medium',
          category: null,
          created_at: ticket?.createdAt,
        });
      });
    });
  });
}
