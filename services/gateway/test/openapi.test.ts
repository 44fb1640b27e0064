// The OpenAPI document as the single source of the contract: what the gateway derives from it
// (routes, scopes, input limits, MCP tools), what it refuses, and how it is served (both
// prefixes, no key) and rendered (/docs, Swagger UI from swagger-ui-dist, CSP-friendly).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { AppError } from '@support-agent/shared';
import { OPENAPI_FILE, readOpenApiFile } from '../src/data-access/openapi-file.js';
import { AgentOperations, type Caller } from '../src/domain/agent-operations.js';
import { ApiContract, ContractError, type JsonObject } from '../src/domain/api-contract.js';
import { SCOPES } from '../src/domain/scopes.js';
import {
  type GatewayBackends,
  request,
  startGateway,
  startGatewayBackends,
  TEST_BASE_URL,
  type TestGateway,
} from './support/gateway.js';
import { stopAll } from '../../../test/support/testing.js';

const doc = () => structuredClone(readOpenApiFile()) as any;
const contract = new ApiContract(doc());

describe('the contract derived from the document', () => {
  it('when the document is read, then every input limit the gateway enforces is the one it states', () => {
    const d = doc();
    const P = d.components.parameters;
    const S = d.components.schemas;
    assert.deepEqual(contract.rules, {
      searchKnowledgeBase: {
        query: { required: true, maxLength: P.KbQuery.schema.maxLength },
        limit: {
          min: P.KbLimit.schema.minimum,
          max: P.KbLimit.schema.maximum,
          default: P.KbLimit.schema.default,
        },
      },
      listTickets: {
        status: { values: S.TicketStatus.enum },
        priority: { values: S.TicketPriority.enum },
        category: {
          maxLength: S.TicketCategory.maxLength,
          pattern: new RegExp(S.TicketCategory.pattern, 'u'),
        },
        limit: {
          min: P.TicketsLimit.schema.minimum,
          max: P.TicketsLimit.schema.maximum,
          default: P.TicketsLimit.schema.default,
        },
        cursor: { required: false, maxLength: P.Cursor.schema.maxLength },
      },
      createTicket: {
        content: { required: true, maxLength: S.CreateTicketRequest.properties.content.maxLength },
        authorName: {
          required: false,
          maxLength: S.CreateTicketRequest.properties.authorName.maxLength,
        },
        idempotencyKey: {
          required: false,
          maxLength: S.CreateTicketRequest.properties.idempotencyKey.maxLength,
        },
        idempotencyKeyHeader: {
          required: false,
          maxLength: P['Idempotency-Key'].schema.maxLength,
        },
      },
      generateAnswer: {
        question: {
          required: true,
          maxLength: S.GenerateAnswerRequest.properties.question.maxLength,
        },
      },
    });
    // …and they are DESIGN.md §3's.
    assert.equal(contract.rules.searchKnowledgeBase.query.maxLength, 2000);
    assert.deepEqual(contract.rules.listTickets.limit, { min: 1, max: 20, default: 10 });
    assert.equal(contract.rules.createTicket.content.maxLength, 4000);
    assert.ok(contract.rules.listTickets.status.values.includes('duplicate'));
    // A category is any name of the shared form: the built-in five and an organization's own.
    for (const name of ['bug', 'how_to', 'Billing & Payments', 'login/SSO'])
      assert.ok(contract.rules.listTickets.category.pattern.test(name), name);
    for (const name of ['', ' bug', 'bug!', 'x'.repeat(33)])
      assert.ok(!contract.rules.listTickets.category.pattern.test(name), name);
  });

  it('when a limit in the document changes, then the operations enforce the new one', async () => {
    const d = doc();
    d.components.parameters.KbQuery.schema.maxLength = 10;
    d.components.schemas.TicketStatus.enum = ['open'];
    const changed = new ApiContract(d);
    const searched: unknown[] = [];
    const ops = new AgentOperations({
      rules: changed.rules,
      knowledge: {
        search: async (req: unknown) => (searched.push(req), { results: [] }),
      } as never,
      tickets: { listTickets: async () => ({ tickets: [] }) } as never,
      digest: {} as never,
      answers: {} as never,
    });
    const caller = { orgId: 'o', requestId: 'r' } as Caller;
    await ops.searchKnowledgeBase(caller, { query: '😀'.repeat(10) }, 'query');
    await assert.rejects(
      ops.searchKnowledgeBase(caller, { query: '😀'.repeat(11) }, 'query'),
      (err: AppError) => err.code === 'invalid_request' && err.param === 'query',
    );
    await assert.rejects(
      ops.listTickets(caller, { status: 'closed' }, 'query'),
      (err: AppError) => err.param === 'status',
    );
    assert.equal(searched.length, 1);
  });

  it('when the routes are derived, then each operation has its scope under both prefixes', () => {
    assert.deepEqual(
      contract.routes.map((r) => [r.operationId, r.method, r.path, r.scope, r.successStatus]),
      [
        ['searchKnowledgeBase', 'get', '/kb/search', 'kb:read', 200],
        ['getFaqDigest', 'get', '/faq', 'faq:read', 200],
        ['listTickets', 'get', '/tickets', 'tickets:read', 200],
        ['createTicket', 'post', '/tickets', 'tickets:write', 201],
        ['generateAnswer', 'post', '/answers', 'answers:write', 200],
      ],
    );
    const d = doc();
    for (const prefix of ['/api/v1/agent', '/api/agent']) {
      for (const r of contract.routes) assert.ok(d.paths[`${prefix}${r.path}`], prefix + r.path);
    }
  });

  it('when the scope catalogue is read, then x-api-scopes lists every scope with exactly its operations', () => {
    assert.deepEqual(Object.keys(contract.scopeCatalogue), [...SCOPES]);
    for (const scope of SCOPES) {
      assert.deepEqual(
        contract.scopeCatalogue[scope].operations,
        contract.routes.filter((r) => r.scope === scope).map((r) => r.operationId),
      );
    }
  });

  it('when the document is inconsistent, then the contract (and so the gateway start) is refused', () => {
    const cases: Array<[string, (d: any) => void, RegExp]> = [
      [
        'scope mismatch',
        (d) => (d.components.pathItems.Faq.get['x-required-scope'] = 'kb:read'),
        /getFaqDigest: security must be/,
      ],
      [
        'one prefix missing',
        (d) => delete d.paths['/api/agent/answers'],
        /generateAnswer must be served at/,
      ],
      [
        'no maxLength',
        (d) => delete d.components.schemas.GenerateAnswerRequest.properties.question.maxLength,
        /question needs an integer limit/,
      ],
      [
        'catalogue without the operation',
        (d) => (d['x-api-scopes']['kb:read'].operations = []),
        /x-api-scopes.kb:read.operations must list it/,
      ],
      [
        'an unknown scope',
        (d) => (d['x-api-scopes']['kb:write'] = { description: 'x', operations: [] }),
        /x-api-scopes must list/,
      ],
      [
        'no MCP tool name',
        (d) => delete d.components.pathItems.Faq.get['x-mcp-tool'],
        /x-mcp-tool/,
      ],
    ];
    for (const [what, mutate, message] of cases) {
      const d = doc();
      mutate(d);
      assert.throws(
        () => new ApiContract(d as JsonObject),
        (err: unknown) => err instanceof ContractError && message.test(err.message),
        what,
      );
    }
  });

  it('when the MCP tools are derived, then names, scopes and schemas come from the operations', () => {
    const d = doc();
    assert.deepEqual(
      contract.tools.map((t) => [t.name, t.operationId, t.scope, t.readOnly]),
      [
        ['search_knowledge_base', 'searchKnowledgeBase', 'kb:read', true],
        ['get_faq_digest', 'getFaqDigest', 'faq:read', true],
        ['list_tickets', 'listTickets', 'tickets:read', true],
        ['create_ticket', 'createTicket', 'tickets:write', false],
        ['generate_answer', 'generateAnswer', 'answers:write', false],
      ],
    );
    const search = contract.tools[0]!;
    assert.deepEqual(search.inputSchema.required, ['query']);
    const query = (search.inputSchema.properties as any).query;
    assert.equal(query.maxLength, d.components.parameters.KbQuery.schema.maxLength);
    assert.equal(query.description, d.components.parameters.KbQuery.description);
    const create = contract.tools[3]!;
    assert.deepEqual(Object.keys(create.inputSchema.properties as object), [
      'content',
      'authorName',
      'idempotencyKey',
    ]);
    // No $ref left: MCP clients get self-contained schemas.
    for (const t of contract.tools) {
      assert.ok(!JSON.stringify([t.inputSchema, t.outputSchema]).includes('$ref'), t.name);
      assert.equal(t.outputSchema.type, 'object');
    }
    const answer = contract.tools[4]!.outputSchema as any;
    assert.equal(answer.additionalProperties, false);
    assert.equal(answer.properties.sources.items.properties.score.maximum, 1);
  });
});

describe('serving the document and the reference page', () => {
  let backends: GatewayBackends;
  let gw: TestGateway;

  before(async () => {
    backends = await startGatewayBackends('gwoa');
    gw = await startGateway(backends.env);
  });

  after(() => stopAll(gw, backends));

  it('when openapi.json is fetched without a key, then both prefixes serve the file with servers = / and PUBLIC_BASE_URL', async () => {
    const file = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8'));
    const [v1, plain] = await Promise.all(
      ['/api/v1/agent', '/api/agent'].map((p) => request(`${gw.base}${p}/openapi.json`)),
    );
    for (const res of [v1!, plain!]) {
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(res.headers.get('cache-control'), 'public, max-age=300');
      assert.deepEqual(
        res.json.servers.map((s: { url: string }) => s.url),
        ['/', TEST_BASE_URL],
      );
      assert.deepEqual({ ...res.json, servers: file.servers }, file);
    }
    assert.equal(v1!.text, plain!.text);
    const head = await request(`${gw.base}/api/agent/openapi.json`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    const post = await request(`${gw.base}/api/agent/openapi.json`, { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
  });

  it('when /docs is fetched, then Swagger UI is served from this origin with no inline script', async () => {
    const page = await request(`${gw.base}/docs`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    const csp = page.headers.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /unsafe-eval|https?:/);
    const scripts = [...page.text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    assert.ok(scripts.length >= 2);
    for (const [, attrs, body] of scripts) {
      assert.match(attrs!, /src="\/docs\/[^"]+"/, 'scripts are files');
      assert.equal(body!.trim(), '', 'no inline script');
    }
    assert.match(page.text, /data-spec-url="\/api\/v1\/agent\/openapi.json"/);
    const assets = [...page.text.matchAll(/(?:src|href)="(\/docs\/[^"]+)"/g)].map((m) => m[1]!);
    assert.deepEqual(assets.sort(), [
      '/docs/favicon-16x16.png',
      '/docs/favicon-32x32.png',
      '/docs/swagger-initializer.js',
      '/docs/swagger-ui-bundle.js',
      '/docs/swagger-ui.css',
    ]);
    for (const asset of assets) {
      const res = await fetch(`${gw.base}${asset}`);
      assert.equal(res.status, 200, asset);
      const type = res.headers.get('content-type') ?? '';
      const expected = asset.endsWith('.js')
        ? /javascript/
        : asset.endsWith('.css')
          ? /css/
          : /png/;
      assert.match(type, expected, asset);
      assert.ok((await res.arrayBuffer()).byteLength > 0);
    }
    const init = await request(`${gw.base}/docs/swagger-initializer.js`);
    assert.match(init.text, /SwaggerUIBundle\(/);
    const missing = await request(`${gw.base}/docs/index.css`);
    assert.equal(missing.status, 404);
    assert.equal(missing.json.error.code, 'not_found');
    const post = await request(`${gw.base}/docs`, { method: 'POST' });
    assert.equal(post.status, 405);
  });
});
