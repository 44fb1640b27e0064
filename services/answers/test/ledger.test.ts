// The deflection ledger contract, run against both adapters: MySQL (real MariaDB) and the
// embedded JSONL journal.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@support-agent/shared';
import { createTestDatabase } from '../../../test/support/mysql.js';
import { EmbeddedLedger } from '../src/data-access/embedded-ledger.js';
import { MysqlLedger } from '../src/data-access/mysql-ledger.js';
import type { DeflectionLedger, PolicyStore } from '../src/domain/ports.js';

const logger = createLogger('test', 'silent');
const NOW = new Date('2026-03-15T12:00:00.000Z');
const TTL = 60_000;

type Ledger = DeflectionLedger & PolicyStore;

interface Adapter {
  name: string;
  open(): Promise<Ledger>;
  /** Opens the same storage again (a restart). */
  reopen(): Promise<Ledger>;
  cleanup(): Promise<void>;
}

function mysqlAdapter(): Adapter {
  let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  return {
    name: 'MySQL',
    async open() {
      db = await createTestDatabase('answers_ledger');
      return MysqlLedger.open(db.url, logger);
    },
    reopen: () => MysqlLedger.open(db!.url, logger),
    async cleanup() {
      await db?.drop();
    },
  };
}

function embeddedAdapter(): Adapter {
  const dir = mkdtempSync(join(tmpdir(), 'answers-ledger-'));
  return {
    name: 'embedded',
    open: async () => EmbeddedLedger.open(dir, logger),
    reopen: async () => EmbeddedLedger.open(dir, logger),
    cleanup: async () => undefined,
  };
}

for (const adapter of [mysqlAdapter(), embeddedAdapter()]) {
  describe(`${adapter.name} ledger`, () => {
    let ledger: Ledger;
    let seq = 0;
    const id = () => `req-${++seq}`;
    const reserve = (orgId: string, requestId: string, limit: number, now = NOW, ttlMs = TTL) =>
      ledger.reserve({ orgId, requestId, limit, now, ttlMs });

    before(async () => {
      ledger = await adapter.open();
    });
    after(async () => {
      await ledger.close();
      await adapter.cleanup();
    });

    test('when slots are reserved up to the limit, then the next reservation gets limit_reached', async () => {
      assert.equal((await reserve('a', id(), 2)).kind, 'reserved');
      assert.equal((await reserve('a', id(), 2)).kind, 'reserved');
      assert.deepEqual(await reserve('a', id(), 2), { kind: 'limit_reached', month: '2026-03' });
    });

    test('when a slot is released, then it can be reserved again, and only commits count as used', async () => {
      const first = id();
      assert.equal((await reserve('b', first, 1)).kind, 'reserved');
      assert.equal((await reserve('b', id(), 1)).kind, 'limit_reached');
      await ledger.release(first);
      const second = id();
      assert.equal((await reserve('b', second, 1)).kind, 'reserved');
      assert.equal(await ledger.used('b', '2026-03'), 0);
      assert.equal(await ledger.commit(second, 1, NOW), 'committed');
      assert.equal(await ledger.used('b', '2026-03'), 1);
      assert.equal((await reserve('b', id(), 1)).kind, 'limit_reached');
    });

    test('when one request id reserves and commits twice (a redelivery), then it holds one slot and counts once', async () => {
      const req = id();
      assert.equal((await reserve('c', req, 5)).kind, 'reserved');
      assert.equal((await reserve('c', req, 5)).kind, 'reserved');
      assert.equal(await ledger.commit(req, 5, NOW), 'committed');
      assert.equal(await ledger.commit(req, 5, NOW), 'already_committed');
      assert.equal((await reserve('c', req, 5)).kind, 'already_committed');
      await ledger.release(req); // a late release of a committed request changes nothing
      assert.equal(await ledger.used('c', '2026-03'), 1);
      // Four more slots are left: the request held only one.
      for (let i = 0; i < 4; i++) assert.equal((await reserve('c', id(), 5)).kind, 'reserved');
      assert.equal((await reserve('c', id(), 5)).kind, 'limit_reached');
    });

    test('when a reservation expires, then releaseExpired frees its slot and a late commit takes a slot again only if one is free', async () => {
      const stuck = id();
      assert.equal((await reserve('d', stuck, 1, NOW, 1_000)).kind, 'reserved');
      assert.equal(
        await ledger.releaseExpired(new Date(NOW.getTime() + 500)),
        0,
        'not expired yet',
      );
      assert.equal(await ledger.releaseExpired(new Date(NOW.getTime() + 2_000)), 1);
      const other = id();
      assert.equal((await reserve('d', other, 1)).kind, 'reserved');
      // The stuck generation finishes after all: the month is full, so it may not count.
      assert.equal(await ledger.commit(stuck, 1, NOW), 'limit_reached');
      await ledger.release(other);
      assert.equal(await ledger.commit(stuck, 1, NOW), 'committed');
      assert.equal(await ledger.used('d', '2026-03'), 1);
    });

    test('when deflections happen in two months, then each month counts its own', async () => {
      const jan = id();
      const feb = id();
      await reserve('e', jan, 1, new Date('2026-01-31T23:59:59.900Z'));
      await ledger.commit(jan, 1, new Date('2026-01-31T23:59:59.950Z'));
      assert.equal(
        (await reserve('e', feb, 1, new Date('2026-02-01T00:00:00.000Z'))).kind,
        'reserved',
      );
      await ledger.commit(feb, 1, new Date('2026-02-01T00:00:01.000Z'));
      assert.equal(await ledger.used('e', '2026-01'), 1);
      assert.equal(await ledger.used('e', '2026-02'), 1);
    });

    test('when the clock steps forward across a month boundary and back, then the limit starts over once and the earlier month is not reopened', async () => {
      const before = new Date('2026-04-30T23:30:00.000Z');
      const jumped = new Date('2026-05-01T00:30:00.000Z');
      const granted: string[] = [];
      const deflect = async (now: Date) => {
        const req = id();
        const r = await reserve('jump', req, 2, now);
        if (r.kind !== 'reserved') return;
        if ((await ledger.commit(req, 2, now)) === 'committed') granted.push(r.month);
      };
      await deflect(before); // April: 1 of 2
      for (let i = 0; i < 3; i++) await deflect(jumped); // +1 h: May starts over (2 of 2)
      for (let i = 0; i < 3; i++) await deflect(before); // −1 h: still May, nothing left
      for (let i = 0; i < 3; i++) await deflect(new Date('2026-05-01T00:00:01.000Z'));
      assert.deepEqual(granted, ['2026-04', '2026-05', '2026-05']);
      assert.equal(await ledger.used('jump', '2026-04'), 1);
      assert.equal(await ledger.used('jump', '2026-05'), 2);
    });

    test('when 60 reservations race for 10 slots, then exactly 10 are granted', async () => {
      const outcomes = await Promise.all(
        Array.from({ length: 60 }, () => reserve('race', id(), 10)),
      );
      assert.equal(outcomes.filter((o) => o.kind === 'reserved').length, 10);
      assert.equal(outcomes.filter((o) => o.kind === 'limit_reached').length, 50);
    });

    test('when the ledger is reopened, then counts, reservations and policies survive', async () => {
      const req = id();
      await reserve('f', req, 3);
      await ledger.commit(req, 3, NOW);
      const held = id();
      await reserve('f', held, 3);
      await ledger.set('f', { deflectionMonthlyLimit: 3, highConfidenceThreshold: 60 }, NOW);
      await ledger.close();
      ledger = await adapter.reopen();
      assert.equal(await ledger.used('f', '2026-03'), 1);
      assert.deepEqual(await ledger.get('f'), {
        deflectionMonthlyLimit: 3,
        highConfidenceThreshold: 60,
      });
      assert.equal((await reserve('f', id(), 3)).kind, 'reserved');
      assert.equal(
        (await reserve('f', id(), 3)).kind,
        'limit_reached',
        'the held slot is still held',
      );
      assert.equal(await ledger.commit(req, 3, NOW), 'already_committed');
    });

    test('when settled reservations are purged, then counts stay and purged request ids can reserve again', async () => {
      const req = id();
      await reserve('g', req, 5);
      await ledger.commit(req, 5, NOW);
      assert.ok((await ledger.purge(new Date(NOW.getTime() + 1_000))) >= 1);
      assert.equal(await ledger.used('g', '2026-03'), 1);
      assert.equal(await ledger.get('unknown-org'), undefined);
    });
  });
}

describe('embedded ledger journal', () => {
  test('when the process died mid-append, then the torn last line is ignored and the rest replays', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'answers-ledger-torn-'));
    const first = EmbeddedLedger.open(dir, logger);
    await first.reserve({ orgId: 'o', requestId: 'r1', limit: 5, now: NOW, ttlMs: TTL });
    await first.commit('r1', 5, NOW);
    await first.close();
    const { appendFileSync } = await import('node:fs');
    appendFileSync(join(dir, 'ledger.jsonl'), '{"t":"reserve","id":"r2","or');
    const second = EmbeddedLedger.open(dir, logger);
    assert.equal(await second.used('o', '2026-03'), 1);
    await second.reserve({ orgId: 'o', requestId: 'r3', limit: 5, now: NOW, ttlMs: TTL });
    await second.close();
    const lines = readFileSync(join(dir, 'ledger.jsonl'), 'utf8').trim().split('\n');
    assert.equal(JSON.parse(lines[lines.length - 1]!).id, 'r3');
  });
});
