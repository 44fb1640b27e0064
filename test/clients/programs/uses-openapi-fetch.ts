// A user's program on a client generated from the served document with openapi-typescript
// (`./schema.d.ts`) and called through openapi-fetch: every operation, every response variant.
// Type-checked (strict) and run by test/clients/generated-sdks.test.ts.
import createClient from 'openapi-fetch';
import {
  assertComplete,
  errorsOfEveryOperation,
  OVERSIZED,
  programConfig,
  Recorder,
  unavailable,
  type CallWithKey,
} from './plan.js';
import type { components, paths } from './schema.js';

type Ticket = components['schemas']['Ticket'];

const config = programConfig();
const seen = new Recorder();
const client = createClient<paths>({
  baseUrl: config.url,
  headers: { authorization: `Bearer ${config.keys.all}` },
});
const as = (key: string) => ({ authorization: `Bearer ${key}` });
const covered = { question: 'How do I export tickets to CSV?' };

const withKey: CallWithKey = (op, key) => {
  const headers = as(key);
  switch (op) {
    case 'searchKnowledgeBase':
      return client.GET('/api/v1/agent/kb/search', {
        params: { query: { query: 'password' } },
        headers,
      });
    case 'getFaqDigest':
      return client.GET('/api/v1/agent/faq', { headers });
    case 'listTickets':
      return client.GET('/api/v1/agent/tickets', { headers });
    case 'createTicket':
      return client.POST('/api/v1/agent/tickets', { body: { content: 'From a client' }, headers });
    case 'generateAnswer':
      return client.POST('/api/v1/agent/answers', { body: covered, headers });
  }
};

async function up(): Promise<void> {
  const doc = await client.GET('/api/v1/agent/openapi.json');
  seen.expect('getOpenApiDocument', 200, 'document', doc, doc.data?.openapi === '3.1.0');

  const search = await client.GET('/api/v1/agent/kb/search', {
    params: { query: { query: 'reset my password', limit: 2 } },
  });
  const top: number | undefined = search.data?.results[0]?.score;
  seen.expect('searchKnowledgeBase', 200, 'results', search, top !== undefined && top > 0);
  const badLimit = await client.GET('/api/v1/agent/kb/search', {
    params: { query: { query: 'x', limit: 0 } },
  });
  seen.error('searchKnowledgeBase', 400, 'invalid_request', badLimit);

  const digest = await client.GET('/api/v1/agent/faq');
  const week: string | null | undefined = digest.data?.week_start;
  const hasDigest = typeof week === 'string' && typeof digest.data?.content === 'string';
  seen.expect('getFaqDigest', 200, 'digest', digest, hasDigest);
  const none = await client.GET('/api/v1/agent/faq', { headers: as(config.keys.fresh) });
  const empty = none.data?.week_start === null && none.data.content === null;
  seen.expect('getFaqDigest', 200, 'none yet', none, empty && none.data?.ticket_count === 0);
  const plain = await client.GET('/api/agent/faq');
  const same = plain.data?.week_end === digest.data?.week_end;
  seen.expect('getFaqDigest', 200, 'digest (/api/agent)', plain, same);

  const header = { 'Idempotency-Key': `sdk-${Date.now()}` };
  const created = await client.POST('/api/v1/agent/tickets', {
    body: { content: 'The export button does nothing', authorName: 'Ada' },
    params: { header },
  });
  seen.expect('createTicket', 201, 'created', created, created.data?.duplicate === false);
  const replay = await client.POST('/api/v1/agent/tickets', {
    body: { content: 'ignored: the first call wins' },
    params: { header },
  });
  const original = replay.data?.ticket_id === created.data?.ticket_id;
  seen.expect(
    'createTicket',
    201,
    'duplicate',
    replay,
    replay.data?.duplicate === true && original,
  );
  await client.POST('/api/v1/agent/tickets', { body: { content: 'A second ticket, for paging' } });
  const blank = await client.POST('/api/v1/agent/tickets', { body: { content: ' ' } });
  seen.error('createTicket', 400, 'invalid_request', blank);
  const huge = await client.POST('/api/v1/agent/tickets', { body: { content: OVERSIZED } });
  seen.error('createTicket', 413, 'payload_too_large', huge);

  const first = await client.GET('/api/v1/agent/tickets', { params: { query: { limit: 1 } } });
  const cursor: string | null | undefined = first.data?.next_cursor;
  seen.expect('listTickets', 200, 'page with next_cursor', first, typeof cursor === 'string');
  const tickets: Ticket[] = [...(first.data?.tickets ?? [])];
  let page = first;
  while (page.data?.next_cursor) {
    page = await client.GET('/api/v1/agent/tickets', {
      params: { query: { limit: 1, cursor: page.data.next_cursor } },
    });
    tickets.push(...(page.data?.tickets ?? []));
  }
  seen.expect('listTickets', 200, 'last page', page, tickets.length >= 2);
  const badStatus = await client.GET('/api/v1/agent/tickets', {
    params: { query: { status: 'pending' as Ticket['status'] } },
  });
  seen.error('listTickets', 400, 'invalid_request', badStatus);
  const forged = await client.GET('/api/v1/agent/tickets', {
    params: { query: { cursor: 'forged' } },
  });
  seen.error('listTickets', 400, 'invalid_cursor', forged);

  const answer = await client.POST('/api/v1/agent/answers', { body: covered });
  const sources = answer.data?.sources ?? [];
  seen.expect('generateAnswer', 200, 'answer with sources', answer, sources.length > 0);
  const unknown = await client.POST('/api/v1/agent/answers', {
    body: { question: 'Which moon of Jupiter is largest?' },
  });
  const unsourced = unknown.data?.sources === undefined && unknown.data?.high_confidence === false;
  seen.expect('generateAnswer', 200, 'answer without sources', unknown, unsourced);
  const blankQuestion = await client.POST('/api/v1/agent/answers', { body: { question: '' } });
  seen.error('generateAnswer', 400, 'invalid_request', blankQuestion);
  const long = await client.POST('/api/v1/agent/answers', { body: { question: OVERSIZED } });
  seen.error('generateAnswer', 413, 'payload_too_large', long);
  const fresh = as(config.keys.fresh);
  const used = await client.POST('/api/v1/agent/answers', { body: covered, headers: fresh });
  if (used.data?.high_confidence !== true) throw new Error('the one deflection slot was not used');
  const limit = await client.POST('/api/v1/agent/answers', { body: covered, headers: fresh });
  seen.error('generateAnswer', 429, 'deflection_limit_reached', limit);

  await errorsOfEveryOperation(seen, config, withKey);
}

await (config.phase === 'up' ? up() : unavailable(seen, config, withKey));
assertComplete(seen, config);
