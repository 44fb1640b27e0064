// The OpenAI embeddings adapter against a local OpenAI-compatible stub server that
// checks the shape of every request and can answer 429/5xx or hang.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { AppError } from '@support-agent/shared';
import {
  OpenAIEmbeddings,
  type OpenAIEmbeddingsOptions,
} from '../src/data-access/openai-embeddings.js';
import { hash32 } from '../src/domain/hashing.js';

interface SeenRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  retryCount: string | undefined;
  body: { model?: unknown; input?: unknown; encoding_format?: unknown; dimensions?: unknown };
}

type Behaviour = 'ok' | 429 | 500 | 503 | 400 | 'hang' | 'wrong-size';

/** Deterministic stand-in vectors: the same text always gives the same vector. */
function fakeVector(text: string, dims: number): number[] {
  return Array.from({ length: dims }, (_, i) => ((hash32(`${text}#${i}`) % 2000) - 1000) / 1000);
}

class EmbeddingsStub {
  readonly seen: SeenRequest[] = [];
  /** Behaviour of the next requests, in order; then 'ok'. */
  readonly script: Behaviour[] = [];
  readonly problems: string[] = [];
  dims = 8;
  private server: Server | undefined;
  private readonly hanging = new Set<ServerResponse>();
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((done) => this.server!.listen(0, '127.0.0.1', done));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((done) => this.server?.close(() => done()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: SeenRequest['body'] = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as SeenRequest['body'];
    } catch {
      this.problems.push('body is not JSON');
    }
    const seen: SeenRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      authorization: req.headers.authorization,
      retryCount: req.headers['x-stainless-retry-count'] as string | undefined,
      body,
    };
    this.seen.push(seen);
    if (seen.method !== 'POST' || seen.path !== '/v1/embeddings')
      this.problems.push(`unexpected ${seen.method} ${seen.path}`);
    if (!req.headers['content-type']?.startsWith('application/json'))
      this.problems.push('content-type is not JSON');
    if (typeof body.model !== 'string') this.problems.push('model missing');
    if (!Array.isArray(body.input) || body.input.some((x) => typeof x !== 'string'))
      this.problems.push('input is not a string array');
    if (body.encoding_format !== 'float')
      this.problems.push(`encoding_format ${String(body.encoding_format)}`);

    const behaviour = this.script.shift() ?? 'ok';
    if (behaviour === 'hang') {
      this.hanging.add(res);
      return;
    }
    if (typeof behaviour === 'number') {
      res.writeHead(behaviour, { 'content-type': 'application/json', 'retry-after-ms': '10' });
      res.end(
        JSON.stringify({ error: { message: `stub ${behaviour}`, type: 'stub_error', code: null } }),
      );
      return;
    }
    const inputs = body.input as string[];
    const dims = typeof body.dimensions === 'number' ? body.dimensions : this.dims;
    const data = inputs.map((text, index) => ({
      object: 'embedding',
      index,
      embedding: fakeVector(text, behaviour === 'wrong-size' ? dims + 1 : dims),
    }));
    // Out of order on purpose: the adapter must order by `index`.
    data.reverse();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        object: 'list',
        data,
        model: body.model,
        usage: { prompt_tokens: 1, total_tokens: 1 },
      }),
    );
  }
}

describe('OpenAI embeddings adapter', () => {
  const stub = new EmbeddingsStub();
  const options = (over: Partial<OpenAIEmbeddingsOptions> = {}): OpenAIEmbeddingsOptions => ({
    apiKey: 'test-key',
    baseURL: stub.url,
    model: 'stub-model',
    dimensions: 8,
    timeoutMs: 2_000,
    maxRetries: 2,
    batchSize: 64,
    ...over,
  });

  before(() => stub.start());
  after(() => stub.stop());
  beforeEach(() => {
    stub.seen.length = 0;
    stub.script.length = 0;
    stub.problems.length = 0;
    stub.dims = 8;
  });

  it('when many texts are embedded, then they go in batches with the right shape and come back in order, normalised', async () => {
    const provider = await OpenAIEmbeddings.create(options());
    const texts = Array.from({ length: 150 }, (_, i) => `text number ${i}`);
    const vectors = await provider.embedTexts(texts);
    assert.deepEqual(stub.problems, []);
    assert.deepEqual(
      stub.seen.map((r) => (r.body.input as string[]).length).sort((a, b) => b - a),
      [64, 64, 22],
    );
    for (const r of stub.seen) {
      assert.equal(r.authorization, 'Bearer test-key');
      assert.equal(r.body.model, 'stub-model');
      assert.equal(r.body.dimensions, 8);
    }
    assert.equal(vectors.length, 150);
    texts.forEach((t, i) => {
      const expected = fakeVector(t, 8);
      const norm = Math.hypot(...expected);
      expected.forEach((x, j) =>
        assert.ok(Math.abs(vectors[i]![j]! - x / norm) < 1e-6, `vector ${i} in order`),
      );
    });
    assert.deepEqual(provider.fingerprint, {
      provider: 'openai',
      model: 'stub-model',
      dimensions: 8,
    });
  });

  it('when an entry is embedded, then its question, tags and answer are sent as one text', async () => {
    const provider = await OpenAIEmbeddings.create(options());
    await provider.embedDocuments([
      { question: 'How do I export?', answer: 'Use Export.', tags: ['csv'] },
    ]);
    assert.deepEqual(stub.seen[0]!.body.input, ['How do I export?\nTags: csv\n\nUse Export.']);
  });

  for (const failure of [429, 500, 503] as const) {
    it(`when the server answers ${failure} once, then the request is retried and succeeds`, async () => {
      const provider = await OpenAIEmbeddings.create(options());
      stub.script.push(failure);
      const v = await provider.embedQuery('hello');
      assert.equal(v.length, 8);
      assert.equal(stub.seen.length, 2);
      assert.equal(stub.seen[1]!.retryCount, '1');
      assert.deepEqual(stub.seen[1]!.body, stub.seen[0]!.body);
    });
  }

  it('when the server keeps failing, then the call gives up after the retries with service_unavailable', async () => {
    const provider = await OpenAIEmbeddings.create(options({ maxRetries: 2 }));
    stub.script.push(503, 503, 503, 503);
    await assert.rejects(
      provider.embedQuery('hello'),
      (err: unknown) => err instanceof AppError && err.code === 'service_unavailable',
    );
    assert.equal(stub.seen.length, 3);
  });

  it('when the server does not answer in time, then the request times out, is retried, and fails as service_unavailable', async () => {
    const provider = await OpenAIEmbeddings.create(options({ timeoutMs: 150, maxRetries: 1 }));
    stub.script.push('hang', 'hang');
    const started = Date.now();
    await assert.rejects(
      provider.embedQuery('hello'),
      (err: unknown) => err instanceof AppError && err.code === 'service_unavailable',
    );
    assert.equal(stub.seen.length, 2);
    assert.ok(Date.now() - started < 5_000, 'bounded by timeout × attempts plus backoff');
  });

  it('when the request is rejected as invalid (400), then it is not retried', async () => {
    const provider = await OpenAIEmbeddings.create(options());
    stub.script.push(400);
    await assert.rejects(provider.embedQuery('hello'), AppError);
    assert.equal(stub.seen.length, 1);
  });

  it('when the server returns vectors of another size, then the adapter refuses them', async () => {
    const provider = await OpenAIEmbeddings.create(options());
    stub.script.push('wrong-size');
    await assert.rejects(
      provider.embedQuery('hello'),
      (err: unknown) => err instanceof AppError && /dimensions/.test(err.message),
    );
  });

  it('when the model’s size is unknown and not configured, then it is learned from one probe request', async () => {
    stub.dims = 12;
    const provider = await OpenAIEmbeddings.create(
      options({ dimensions: undefined, model: 'local-model' }),
    );
    assert.equal(provider.fingerprint.dimensions, 12);
    assert.equal(stub.seen.length, 1);
    assert.equal(
      stub.seen[0]!.body.dimensions,
      undefined,
      'no dimensions parameter unless configured',
    );
    assert.equal((await provider.embedQuery('x')).length, 12);
  });
});
