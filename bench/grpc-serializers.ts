// CPU per message of the gRPC serializers, as ts-proto generates them and through the reused
// writer of packages/shared/src/grpc-serializers.ts (what every service and client now uses),
// for the messages of the bench's hot paths, in alternating rounds. Prints µs of CPU
// (process.cpuUsage) per message per round and the medians. Not a test.
//   npx tsx bench/grpc-serializers.ts [messages per round=100000] [rounds=6]
import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import { knowledge, tickets } from '@support-agent/proto';
import { withPooledSerializers } from '@support-agent/shared';
import { median } from './lib/measure.js';

const perRound = Number(process.argv[2] ?? 100_000);
const rounds = Number(process.argv[3] ?? 6);

type Serialize = (value: never) => Buffer;
type Method = MethodDefinition<unknown, unknown>;

const hit = (i: number): knowledge.SearchHit => ({
  entryId: `kb_${1000 + i}`,
  question: `How do I export my tickets to CSV without a timeout? (${i})`,
  answer: 'Use the export endpoint with a date range; large exports are streamed. '.repeat(5),
  score: 0.9 - i / 10,
});
const ticket = (i: number): tickets.Ticket => ({
  id: 100_000 + i,
  orgId: 'org_bench',
  content: 'My export to CSV fails with a timeout after 30 seconds.',
  category: 'bug',
  priority: 'high',
  status: 'open',
  aiSummary: 'CSV export times out after 30 s.',
  createdAt: '2026-11-27T03:00:00.000Z',
  updatedAt: '2026-11-27T03:00:01.000Z',
});

// [label, service, method, side, message]: the hot paths' requests and answers.
const cases: [string, ServiceDefinition, string, 'request' | 'response', unknown][] = [
  [
    'knowledge Search request',
    knowledge.KnowledgeServiceService,
    'search',
    'request',
    { orgId: 'org_bench', query: 'export csv timeout', limit: 5 },
  ],
  [
    'knowledge Search answer (5 hits, ≈2 KB)',
    knowledge.KnowledgeServiceService,
    'search',
    'response',
    { results: [0, 1, 2, 3, 4].map(hit) },
  ],
  [
    'tickets ListTickets answer (10 tickets)',
    tickets.TicketsServiceService,
    'listTickets',
    'response',
    { tickets: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map(ticket), nextCursor: 'eyJpZCI6MTAwMDA5fQ' },
  ],
  [
    'tickets CreateTicket request',
    tickets.TicketsServiceService,
    'createTicket',
    'request',
    {
      orgId: 'org_bench',
      content: 'My export to CSV fails with a timeout after 30 seconds.',
      idempotencyKey: '0f0e0d0c-0b0a-0908-0706-050403020100',
    },
  ],
];

const serializerOf = (method: Method, side: 'request' | 'response'): Serialize =>
  (side === 'request' ? method.requestSerialize : method.responseSerialize) as Serialize;

function cpuPerMessage(serialize: Serialize, message: unknown): number {
  let bytes = 0;
  const start = process.cpuUsage();
  for (let i = 0; i < perRound; i++) bytes += serialize(message as never).length;
  const used = process.cpuUsage(start);
  if (bytes === 0) throw new Error('nothing serialized');
  return (used.user + used.system) / perRound;
}

console.log(`${perRound} messages per round, ${rounds} rounds, µs of CPU per message`);
for (const [label, service, method, side, message] of cases) {
  const generated = serializerOf(service[method] as Method, side);
  const pooled = serializerOf(withPooledSerializers(service)[method] as Method, side);
  const bytes = generated(message as never);
  if (!bytes.equals(pooled(message as never))) throw new Error(`${label}: bytes differ`);
  const times = { generated: [] as number[], pooled: [] as number[] };
  for (let r = 0; r < rounds; r++) {
    // Alternate which goes first, so neither always runs on the warmer heap.
    const order =
      r % 2 === 0 ? (['generated', 'pooled'] as const) : (['pooled', 'generated'] as const);
    for (const way of order) {
      times[way].push(cpuPerMessage(way === 'generated' ? generated : pooled, message));
    }
  }
  const fmt = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(' ');
  console.log(
    `${label}, ${bytes.length} B: generated ${median(times.generated).toFixed(2)} ` +
      `(${fmt(times.generated)}), pooled ${median(times.pooled).toFixed(2)} (${fmt(times.pooled)})`,
  );
}
