// A service address naming several replicas: calls spread over them, a dead one is skipped,
// and a read-only call in flight on a replica that dies is answered by another.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { AppError, createKnowledgeClient, parseGrpcTarget } from '@support-agent/shared';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));

/**
 * A knowledge stand-in in a process of its own (killed with SIGKILL, as a replica dies):
 * CountEntries and DeleteEntries answer its replica number `n`, after `slowMs` for org "slow".
 */
const REPLICA = `
import { knowledge } from '@support-agent/proto';
import { createLogger, startGrpcServer } from '@support-agent/shared';
const [n, slowMs] = process.argv.slice(1).map(Number);
const after = (call, cb, answer) =>
  setTimeout(() => cb(null, answer), call.request.orgId === 'slow' ? slowMs : 0);
const server = await startGrpcServer({
  host: '127.0.0.1', port: 0, logger: createLogger('replica', 'silent'),
  services: [{ definition: knowledge.KnowledgeServiceService, implementation: {
    countEntries: (call, cb) => after(call, cb, { count: n }),
    deleteEntries: (call, cb) => after(call, cb, { deleted: n }),
  } }],
});
console.log(server.port);`;

interface Replica {
  port: number;
  kill(): void;
}

function replica(n: number, slowMs: number): Promise<Replica> {
  const child = spawn(
    process.execPath,
    ['--input-type=module', '-e', REPLICA, String(n), String(slowMs)],
    { cwd: PACKAGE_DIR, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const kill = () => void child.kill('SIGKILL');
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`replica ${n} exited (${code})`)));
    child.stdout.once('data', (d) => resolve({ port: Number(String(d).trim()), kill }));
  });
}

describe('service addresses with several replicas', () => {
  const replicas: Replica[] = [];
  after(() => replicas.forEach((r) => r.kill()));

  it('when an address is parsed, then one endpoint, a DNS name and an IP list are accepted and a list of names is refused', () => {
    assert.deepEqual(parseGrpcTarget('tickets:50051'), {
      address: 'tickets:50051',
      endpoints: ['tickets:50051'],
    });
    assert.deepEqual(parseGrpcTarget('dns:///tickets:50051'), {
      address: 'dns:///tickets:50051',
      endpoints: ['tickets:50051'],
    });
    assert.deepEqual(parseGrpcTarget('10.0.0.1:50051, 10.0.0.2:50051'), {
      address: 'ipv4:10.0.0.1:50051,10.0.0.2:50051',
      endpoints: ['10.0.0.1:50051', '10.0.0.2:50051'],
    });
    assert.deepEqual(parseGrpcTarget('[::1]:1,[::1]:2'), {
      address: 'ipv6:[::1]:1,[::1]:2',
      endpoints: ['[::1]:1', '[::1]:2'],
    });
    for (const bad of [
      'a:1,b:2',
      '10.0.0.1:1,[::1]:2',
      'x',
      '1.2.3.4:99999',
      '1.1.1.1:1,1.1.1.1:1',
    ]) {
      assert.ok('error' in parseGrpcTarget(bad), bad);
    }
  });

  it('when two replicas are listed, then calls reach both, and after one dies every call succeeds on the other', async () => {
    const [a, b] = await Promise.all([replica(1, 60_000), replica(2, 200)]);
    replicas.push(a, b);
    const client = createKnowledgeClient(`127.0.0.1:${a.port},127.0.0.1:${b.port}`, {
      deadlineMs: 3_000,
    });
    try {
      const seen = new Set<number>();
      for (let i = 0; i < 10; i++)
        seen.add(Number((await client.countEntries({ orgId: 'o' })).count));
      assert.deepEqual([...seen].sort(), [1, 2], 'both replicas answer');

      // Two slow calls: round robin sends one to each; replica 1 dies with its call in hand.
      const reads = [0, 1].map(() => client.countEntries({ orgId: 'slow' }));
      const writes = [0, 1].map(() =>
        client.deleteEntries({ orgId: 'slow', ids: ['x'] }).then(
          (r) => r.deleted,
          (e: unknown) => e,
        ),
      );
      await sleep(100);
      a.kill();
      const answered = (
        await Promise.all(
          reads.map((r) =>
            r.catch((e: AppError) => {
              console.log(e.cause);
              throw e;
            }),
          ),
        )
      ).map((r) => Number(r.count));
      assert.deepEqual(
        answered,
        [2, 2],
        'the read in flight on the dead replica was answered by the other',
      );
      const outcomes = await Promise.all(writes);
      assert.ok(outcomes.includes(2), 'the write on the live replica succeeded');
      const failed = outcomes.find((o) => o !== 2);
      assert.ok(
        failed instanceof AppError && failed.code === 'service_unavailable',
        `a write is never repeated behind the caller's back: ${String(failed)}`,
      );

      const t0 = Date.now();
      for (let i = 0; i < 20; i++) {
        assert.equal(Number((await client.countEntries({ orgId: 'o' })).count), 2);
      }
      assert.ok(Date.now() - t0 < 2_000, `20 calls after the death took ${Date.now() - t0} ms`);
    } finally {
      client.close();
    }
  });
});
