// A user's program on the SDK @hey-api/openapi-ts generates from the served document (its fetch
// client, in ./sdk): every operation, every response variant. Type-checked (strict) and run by
// test/clients/generated-sdks.test.ts.
import {
  assertComplete,
  errorsOfEveryOperation,
  OVERSIZED,
  programConfig,
  Recorder,
  unavailable,
  type CallWithKey,
} from './plan.js';
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

const config = programConfig();
const seen = new Recorder();
client.setConfig({ baseUrl: config.url, auth: () => config.keys.all });
const covered = { question: 'How do I export tickets to CSV?' };

const withKey: CallWithKey = (op, auth) => {
  switch (op) {
    case 'searchKnowledgeBase':
      return searchKnowledgeBase({ auth, query: { query: 'password' } });
    case 'getFaqDigest':
      return getFaqDigest({ auth });
    case 'listTickets':
      return listTickets({ auth });
    case 'createTicket':
      return createTicket({ auth, body: { content: 'From the SDK' } });
    case 'generateAnswer':
      return generateAnswer({ auth, body: covered });
  }
};

async function up(): Promise<void> {
  const doc = await getOpenApiDocument();
  seen.expect('getOpenApiDocument', 200, 'document', doc, doc.data?.openapi === '3.1.0');

  const search = await searchKnowledgeBase({ query: { query: 'reset my password', limit: 2 } });
  const top: number | undefined = search.data?.results[0]?.score;
  seen.expect('searchKnowledgeBase', 200, 'results', search, top !== undefined && top > 0);
  const badLimit = await searchKnowledgeBase({ query: { query: 'x', limit: 0 } });
  seen.error('searchKnowledgeBase', 400, 'invalid_request', badLimit);

  const digest = await getFaqDigest();
  const body: FaqDigest | undefined = digest.data;
  const hasDigest = typeof body?.week_start === 'string' && typeof body.content === 'string';
  seen.expect('getFaqDigest', 200, 'digest', digest, hasDigest);
  const none = await getFaqDigest({ auth: config.keys.fresh });
  const empty = none.data?.week_start === null && none.data.content === null;
  seen.expect('getFaqDigest', 200, 'none yet', none, empty && none.data?.ticket_count === 0);
  const plain = await getFaqDigest2();
  const same = plain.data?.week_end === body?.week_end;
  seen.expect('getFaqDigest', 200, 'digest (/api/agent)', plain, same);

  const headers = { 'Idempotency-Key': `hey-${Date.now()}` };
  const created = await createTicket({
    body: { content: 'The export button does nothing', authorName: 'Ada' },
    headers,
  });
  seen.expect('createTicket', 201, 'created', created, created.data?.duplicate === false);
  const replay = await createTicket({ body: { content: 'ignored: the first wins' }, headers });
  const original = replay.data?.ticket_id === created.data?.ticket_id;
  seen.expect(
    'createTicket',
    201,
    'duplicate',
    replay,
    replay.data?.duplicate === true && original,
  );
  await createTicket({ body: { content: 'A second ticket, for paging' } });
  const blank = await createTicket({ body: { content: ' ' } });
  seen.error('createTicket', 400, 'invalid_request', blank);
  const huge = await createTicket({ body: { content: OVERSIZED } });
  seen.error('createTicket', 413, 'payload_too_large', huge);

  const first = await listTickets({ query: { limit: 1 } });
  const cursor: string | null | undefined = first.data?.next_cursor;
  seen.expect('listTickets', 200, 'page with next_cursor', first, typeof cursor === 'string');
  const tickets: Ticket[] = [...(first.data?.tickets ?? [])];
  let page = first;
  while (page.data?.next_cursor) {
    page = await listTickets({ query: { limit: 1, cursor: page.data.next_cursor } });
    tickets.push(...(page.data?.tickets ?? []));
  }
  seen.expect('listTickets', 200, 'last page', page, tickets.length >= 2);
  const badStatus = await listTickets({ query: { status: 'pending' as Ticket['status'] } });
  seen.error('listTickets', 400, 'invalid_request', badStatus);
  const forged = await listTickets({ query: { cursor: 'forged' } });
  seen.error('listTickets', 400, 'invalid_cursor', forged);

  const answer = await generateAnswer({ body: covered });
  const sources = answer.data?.sources ?? [];
  seen.expect('generateAnswer', 200, 'answer with sources', answer, sources.length > 0);
  const unknown = await generateAnswer({ body: { question: 'Which moon of Jupiter is largest?' } });
  const unsourced = unknown.data?.sources === undefined && unknown.data?.high_confidence === false;
  seen.expect('generateAnswer', 200, 'answer without sources', unknown, unsourced);
  const blankQuestion = await generateAnswer({ body: { question: '' } });
  seen.error('generateAnswer', 400, 'invalid_request', blankQuestion);
  const long = await generateAnswer({ body: { question: OVERSIZED } });
  seen.error('generateAnswer', 413, 'payload_too_large', long);
  const used = await generateAnswer({ auth: config.keys.fresh, body: covered });
  if (used.data?.high_confidence !== true) throw new Error('the one deflection slot was not used');
  const limit = await generateAnswer({ auth: config.keys.fresh, body: covered });
  seen.error('generateAnswer', 429, 'deflection_limit_reached', limit);

  await errorsOfEveryOperation(seen, config, withKey);
}

await (config.phase === 'up' ? up() : unavailable(seen, config, withKey));
assertComplete(seen, config);
