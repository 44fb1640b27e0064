// The one way the services ask an OpenAI-compatible server for structured output: the exact
// request body, the placeholder key for keyless servers, and no retries behind the caller's back.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, test } from 'node:test';
import { createOpenAiClient, structuredCompletion } from '../src/openai.js';

interface Seen {
  method: string | undefined;
  url: string | undefined;
  authorization: string | undefined;
  body: unknown;
}

const seen: Seen[] = [];
let status = 200;
let server: Server;
let baseURL: string;

const COMPLETION = {
  id: 'c1',
  object: 'chat.completion',
  created: 0,
  model: 'm',
  choices: [
    {
      index: 0,
      finish_reason: 'stop',
      message: { role: 'assistant', content: '{"ok":true}', refusal: null },
    },
  ],
};

async function bodyOf(req: IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return JSON.parse(text);
}

before(async () => {
  server = createServer((req, res) => {
    void bodyOf(req).then((body) => {
      seen.push({
        method: req.method,
        url: req.url,
        authorization: req.headers.authorization,
        body,
      });
      res
        .writeHead(status, { 'content-type': 'application/json' })
        .end(JSON.stringify(status === 200 ? COMPLETION : { error: { message: 'down' } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

after(() => new Promise<void>((resolve) => server.close(() => resolve())));

beforeEach(() => {
  seen.length = 0;
  status = 200;
});

const CHAT = {
  model: 'test-model',
  system: 'You answer in JSON.',
  user: 'Is it ok?',
  schemaName: 'verdict',
  schema: { type: 'object', properties: { ok: { type: 'boolean' } } },
};

test('when a structured completion is asked for, then the body is exactly model, temperature 0, both messages and the strict schema', async () => {
  const client = createOpenAiClient({ apiKey: 'sk-test', baseURL });
  const completion = await structuredCompletion(client, CHAT, 5_000);
  assert.equal(completion.choices[0]?.message.content, '{"ok":true}');
  assert.equal(seen.length, 1);
  assert.equal(seen[0]!.method, 'POST');
  assert.equal(seen[0]!.url, '/v1/chat/completions');
  assert.equal(seen[0]!.authorization, 'Bearer sk-test');
  assert.deepEqual(seen[0]!.body, {
    model: 'test-model',
    temperature: 0,
    messages: [
      { role: 'system', content: 'You answer in JSON.' },
      { role: 'user', content: 'Is it ok?' },
    ],
    response_format: {
      type: 'json_schema',
      json_schema: { name: 'verdict', strict: true, schema: CHAT.schema },
    },
  });
});

test('when no key is configured, then the placeholder key is sent (keyless servers ignore it)', async () => {
  await structuredCompletion(createOpenAiClient({ apiKey: undefined, baseURL }), CHAT, 5_000);
  assert.equal(seen[0]!.authorization, 'Bearer unused');
});

test('when the server answers 500, then the error reaches the caller after one request (no SDK retries)', async () => {
  status = 500;
  const client = createOpenAiClient({ apiKey: 'sk-test', baseURL });
  await assert.rejects(structuredCompletion(client, CHAT, 5_000), (err: Error) => {
    assert.match(err.message, /500/);
    return true;
  });
  assert.equal(seen.length, 1);
});
