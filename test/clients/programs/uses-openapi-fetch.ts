// A user's program on a client generated from the served document with openapi-typescript
// (`./schema.d.ts`) and called through openapi-fetch: every operation, every response variant.
// Type-checked (strict) and run by test/clients/generated-sdks.test.ts.
import createClient from 'openapi-fetch';
import {
  EXPECTED,
  OVERSIZED,
  keyWithoutScope,
  programConfig,
  Recorder,
  type ProgramConfig,
} from './plan.js';
import type { components, paths } from './schema.js';

type Ticket = components['schemas']['Ticket'];

const config: ProgramConfig = programConfig();
const seen = new Recorder();
const client = createClient<paths>({
  baseUrl: config.url,
  headers: { authorization: `Bearer ${config.keys.all}` },
});
const as = (key: string) => ({ authorization: `Bearer ${key}` });

/** One call of each operation with the given headers, for the errors every operation has. */
const everyOperation = {
  searchKnowledgeBase: (headers: Record<string, string>) =>
    client.GET('/api/v1/agent/kb/search', { params: { query: { query: 'password' } }, headers }),
  getFaqDigest: (headers: Record<string, string>) => client.GET('/api/v1/agent/faq', { headers }),
  listTickets: (headers: Record<string, string>) =>
    client.GET('/api/v1/agent/tickets', { headers }),
  createTicket: (headers: Record<string, string>) =>
    client.POST('/api/v1/agent/tickets', {
      body: { content: 'From the generated client' },
      headers,
    }),
  generateAnswer: (headers: Record<string, string>) =>
    client.POST('/api/v1/agent/answers', {
      body: { question: 'How do I reset my password?' },
      headers,
    }),
};
type Op = keyof typeof everyOperation;
const ops = Object.keys(everyOperation) as Op[];

async function up(): Promise<void> {
  const doc = await client.GET('/api/v1/agent/openapi.json');
  seen.expect(
    'getOpenApiDocument',
    200,
    'document',
    doc.response.status,
    doc.data?.openapi === '3.1.0',
  );

  const search = await client.GET('/api/v1/agent/kb/search', {
    params: { query: { query: 'reset my password', limit: 2 } },
  });
  const top: number | undefined = search.data?.results[0]?.score;
  seen.expect(
    'searchKnowledgeBase',
    200,
    'results',
    search.response.status,
    top !== undefined && top > 0,
  );
  const badLimit = await client.GET('/api/v1/agent/kb/search', {
    params: { query: { query: 'x', limit: 0 } },
  });
  seen.error(
    'searchKnowledgeBase',
    400,
    'invalid_request',
    badLimit.response.status,
    badLimit.error?.error.code,
  );

  const digest = await client.GET('/api/v1/agent/faq');
  const week: string | null | undefined = digest.data?.week_start;
  seen.expect(
    'getFaqDigest',
    200,
    'digest',
    digest.response.status,
    typeof week === 'string' && typeof digest.data?.content === 'string',
  );
  const none = await client.GET('/api/v1/agent/faq', { headers: as(config.keys.fresh) });
  seen.expect(
    'getFaqDigest',
    200,
    'none yet',
    none.response.status,
    none.data?.week_start === null && none.data.content === null && none.data.ticket_count === 0,
  );
  const plain = await client.GET('/api/agent/faq');
  seen.expect(
    'getFaqDigest',
    200,
    'digest (/api/agent)',
    plain.response.status,
    plain.data?.week_end === digest.data?.week_end,
  );

  const idempotencyKey = `sdk-${Date.now()}`;
  const created = await client.POST('/api/v1/agent/tickets', {
    body: { content: 'The export button does nothing', authorName: 'Ada' },
    params: { header: { 'Idempotency-Key': idempotencyKey } },
  });
  seen.expect(
    'createTicket',
    201,
    'created',
    created.response.status,
    created.data?.duplicate === false,
  );
  const replay = await client.POST('/api/v1/agent/tickets', {
    body: { content: 'ignored: the first call wins' },
    params: { header: { 'Idempotency-Key': idempotencyKey } },
  });
  seen.expect(
    'createTicket',
    201,
    'duplicate',
    replay.response.status,
    replay.data?.duplicate === true && replay.data.ticket_id === created.data?.ticket_id,
  );
  await client.POST('/api/v1/agent/tickets', { body: { content: 'A second ticket, for paging' } });
  const blank = await client.POST('/api/v1/agent/tickets', { body: { content: ' ' } });
  seen.error(
    'createTicket',
    400,
    'invalid_request',
    blank.response.status,
    blank.error?.error.code,
  );
  const huge = await client.POST('/api/v1/agent/tickets', { body: { content: OVERSIZED } });
  seen.error(
    'createTicket',
    413,
    'payload_too_large',
    huge.response.status,
    huge.error?.error.code,
  );

  const first = await client.GET('/api/v1/agent/tickets', { params: { query: { limit: 1 } } });
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
    const page = await client.GET('/api/v1/agent/tickets', {
      params: { query: { limit: 1, cursor: next } },
    });
    status = page.response.status;
    tickets.push(...(page.data?.tickets ?? []));
    next = page.data?.next_cursor ?? null;
  }
  seen.expect(
    'listTickets',
    200,
    'last page',
    status,
    tickets.length >= 2 && tickets.every((t) => t.status !== undefined),
  );
  const badStatus = await client.GET('/api/v1/agent/tickets', {
    params: { query: { status: 'pending' as unknown as Ticket['status'] } },
  });
  seen.error(
    'listTickets',
    400,
    'invalid_request',
    badStatus.response.status,
    badStatus.error?.error.code,
  );
  const forged = await client.GET('/api/v1/agent/tickets', {
    params: { query: { cursor: 'forged' } },
  });
  seen.error(
    'listTickets',
    400,
    'invalid_cursor',
    forged.response.status,
    forged.error?.error.code,
  );

  const answer = await client.POST('/api/v1/agent/answers', {
    body: { question: 'How do I export tickets to CSV?' },
  });
  const sources = answer.data?.sources ?? [];
  seen.expect(
    'generateAnswer',
    200,
    'answer with sources',
    answer.response.status,
    sources.length > 0 && answer.data?.confidence !== undefined,
  );
  const unknown = await client.POST('/api/v1/agent/answers', {
    body: { question: 'Which moon of Jupiter is largest?' },
  });
  seen.expect(
    'generateAnswer',
    200,
    'answer without sources',
    unknown.response.status,
    unknown.data?.sources === undefined && unknown.data?.high_confidence === false,
  );
  const empty = await client.POST('/api/v1/agent/answers', { body: { question: '' } });
  seen.error(
    'generateAnswer',
    400,
    'invalid_request',
    empty.response.status,
    empty.error?.error.code,
  );
  const long = await client.POST('/api/v1/agent/answers', { body: { question: OVERSIZED } });
  seen.error(
    'generateAnswer',
    413,
    'payload_too_large',
    long.response.status,
    long.error?.error.code,
  );
  const fresh = as(config.keys.fresh);
  const used = await client.POST('/api/v1/agent/answers', {
    body: { question: 'How do I export tickets to CSV?' },
    headers: fresh,
  });
  if (used.data?.high_confidence !== true) throw new Error('the one deflection slot was not used');
  const limit = await client.POST('/api/v1/agent/answers', {
    body: { question: 'How do I export tickets to CSV?' },
    headers: fresh,
  });
  seen.error(
    'generateAnswer',
    429,
    'deflection_limit_reached',
    limit.response.status,
    limit.error?.error.code,
  );

  for (const op of ops) {
    const res = await everyOperation[op](as('sak_live_not_a_key'));
    seen.error(op, 401, 'unauthorized', res.response.status, res.error?.error.code);
  }
  for (const op of ops) {
    const res = await everyOperation[op](as(keyWithoutScope(config, op)));
    seen.error(op, 403, 'insufficient_scope', res.response.status, res.error?.error.code);
  }
  await everyOperation.searchKnowledgeBase(as(config.keys.limited)); // the one request allowed
  for (const op of ops) {
    const res = await everyOperation[op](as(config.keys.limited));
    seen.error(op, 429, 'rate_limited', res.response.status, res.error?.error.code);
  }
}

async function down(): Promise<void> {
  for (const op of ops) {
    const res = await everyOperation[op]({});
    seen.error(op, 503, 'service_unavailable', res.response.status, res.error?.error.code);
  }
}

await (config.phase === 'up' ? up() : down());
if (seen.seen.length !== EXPECTED[config.phase].length) throw new Error('a variant was skipped');
