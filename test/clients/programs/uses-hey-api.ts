// A user's program on the SDK @hey-api/openapi-ts generates from the served document (its fetch
// client, in ./sdk): every operation, every response variant. Type-checked (strict) and run by
// test/clients/generated-sdks.test.ts.
import { client } from './sdk/client.gen.js';
import {
  createTicket,
  generateAnswer,
  getFaqDigest,
  getFaqDigest2,
  getOpenApiDocument,
  listTickets,
  searchKnowledgeBase,
} from './sdk/sdk.gen.js';
import type { FaqDigest, Ticket } from './sdk/types.gen.js';
import {
  EXPECTED,
  OVERSIZED,
  keyWithoutScope,
  programConfig,
  Recorder,
  type ProgramConfig,
} from './plan.js';

const config: ProgramConfig = programConfig();
const seen = new Recorder();
client.setConfig({ baseUrl: config.url, auth: () => config.keys.all });

/** One call of each operation with the given key, for the errors every operation has. */
const everyOperation = {
  searchKnowledgeBase: (auth: string) =>
    searchKnowledgeBase({ auth, query: { query: 'password' } }),
  getFaqDigest: (auth: string) => getFaqDigest({ auth }),
  listTickets: (auth: string) => listTickets({ auth }),
  createTicket: (auth: string) => createTicket({ auth, body: { content: 'From the SDK' } }),
  generateAnswer: (auth: string) =>
    generateAnswer({ auth, body: { question: 'How do I reset my password?' } }),
};
type Op = keyof typeof everyOperation;
const ops = Object.keys(everyOperation) as Op[];

async function up(): Promise<void> {
  const doc = await getOpenApiDocument();
  seen.expect(
    'getOpenApiDocument',
    200,
    'document',
    doc.response.status,
    doc.data?.openapi === '3.1.0',
  );

  const search = await searchKnowledgeBase({ query: { query: 'reset my password', limit: 2 } });
  const top: number | undefined = search.data?.results[0]?.score;
  seen.expect(
    'searchKnowledgeBase',
    200,
    'results',
    search.response.status,
    top !== undefined && top > 0,
  );
  const badLimit = await searchKnowledgeBase({ query: { query: 'x', limit: 0 } });
  seen.error(
    'searchKnowledgeBase',
    400,
    'invalid_request',
    badLimit.response.status,
    badLimit.error?.error.code,
  );

  const digest = await getFaqDigest();
  const body: FaqDigest | undefined = digest.data;
  seen.expect(
    'getFaqDigest',
    200,
    'digest',
    digest.response.status,
    typeof body?.week_start === 'string' && typeof body.content === 'string',
  );
  const none = await getFaqDigest({ auth: config.keys.fresh });
  seen.expect(
    'getFaqDigest',
    200,
    'none yet',
    none.response.status,
    none.data?.week_start === null && none.data.content === null && none.data.ticket_count === 0,
  );
  const plain = await getFaqDigest2();
  seen.expect(
    'getFaqDigest',
    200,
    'digest (/api/agent)',
    plain.response.status,
    plain.data?.week_end === body?.week_end,
  );

  const idempotencyKey = `hey-${Date.now()}`;
  const created = await createTicket({
    body: { content: 'The export button does nothing', authorName: 'Ada' },
    headers: { 'Idempotency-Key': idempotencyKey },
  });
  seen.expect(
    'createTicket',
    201,
    'created',
    created.response.status,
    created.data?.duplicate === false,
  );
  const replay = await createTicket({
    body: { content: 'ignored: the first call wins' },
    headers: { 'Idempotency-Key': idempotencyKey },
  });
  seen.expect(
    'createTicket',
    201,
    'duplicate',
    replay.response.status,
    replay.data?.duplicate === true && replay.data.ticket_id === created.data?.ticket_id,
  );
  await createTicket({ body: { content: 'A second ticket, for paging' } });
  const blank = await createTicket({ body: { content: ' ' } });
  seen.error(
    'createTicket',
    400,
    'invalid_request',
    blank.response.status,
    blank.error?.error.code,
  );
  const huge = await createTicket({ body: { content: OVERSIZED } });
  seen.error(
    'createTicket',
    413,
    'payload_too_large',
    huge.response.status,
    huge.error?.error.code,
  );

  const first = await listTickets({ query: { limit: 1 } });
  const cursor: string | null | undefined = first.data?.next_cursor;
  seen.expect(
    'listTickets',
    200,
    'page with next_cursor',
    first.response.status,
    typeof cursor === 'string',
  );
  let next = cursor ?? null;
  const tickets: Ticket[] = [...(first.data?.tickets ?? [])];
  let status = first.response.status;
  while (next !== null) {
    const page = await listTickets({ query: { limit: 1, cursor: next } });
    status = page.response.status;
    tickets.push(...(page.data?.tickets ?? []));
    next = page.data?.next_cursor ?? null;
  }
  seen.expect('listTickets', 200, 'last page', status, tickets.length >= 2);
  const badStatus = await listTickets({
    query: { status: 'pending' as unknown as Ticket['status'] },
  });
  seen.error(
    'listTickets',
    400,
    'invalid_request',
    badStatus.response.status,
    badStatus.error?.error.code,
  );
  const forged = await listTickets({ query: { cursor: 'forged' } });
  seen.error(
    'listTickets',
    400,
    'invalid_cursor',
    forged.response.status,
    forged.error?.error.code,
  );

  const answer = await generateAnswer({ body: { question: 'How do I export tickets to CSV?' } });
  const sources = answer.data?.sources ?? [];
  seen.expect(
    'generateAnswer',
    200,
    'answer with sources',
    answer.response.status,
    sources.length > 0,
  );
  const unknown = await generateAnswer({ body: { question: 'Which moon of Jupiter is largest?' } });
  seen.expect(
    'generateAnswer',
    200,
    'answer without sources',
    unknown.response.status,
    unknown.data?.sources === undefined && unknown.data?.high_confidence === false,
  );
  const empty = await generateAnswer({ body: { question: '' } });
  seen.error(
    'generateAnswer',
    400,
    'invalid_request',
    empty.response.status,
    empty.error?.error.code,
  );
  const long = await generateAnswer({ body: { question: OVERSIZED } });
  seen.error(
    'generateAnswer',
    413,
    'payload_too_large',
    long.response.status,
    long.error?.error.code,
  );
  const covered = { question: 'How do I export tickets to CSV?' };
  const used = await generateAnswer({ auth: config.keys.fresh, body: covered });
  if (used.data?.high_confidence !== true) throw new Error('the one deflection slot was not used');
  const limit = await generateAnswer({ auth: config.keys.fresh, body: covered });
  seen.error(
    'generateAnswer',
    429,
    'deflection_limit_reached',
    limit.response.status,
    limit.error?.error.code,
  );

  for (const op of ops) {
    const res = await everyOperation[op]('sak_live_not_a_key');
    seen.error(op, 401, 'unauthorized', res.response.status, res.error?.error.code);
  }
  for (const op of ops) {
    const res = await everyOperation[op](keyWithoutScope(config, op));
    seen.error(op, 403, 'insufficient_scope', res.response.status, res.error?.error.code);
  }
  await everyOperation.searchKnowledgeBase(config.keys.limited); // the one request allowed
  for (const op of ops) {
    const res = await everyOperation[op](config.keys.limited);
    seen.error(op, 429, 'rate_limited', res.response.status, res.error?.error.code);
  }
}

async function down(): Promise<void> {
  for (const op of ops) {
    const res = await everyOperation[op](config.keys.all);
    seen.error(op, 503, 'service_unavailable', res.response.status, res.error?.error.code);
  }
}

await (config.phase === 'up' ? up() : down());
if (seen.seen.length !== EXPECTED[config.phase].length) throw new Error('a variant was skipped');
