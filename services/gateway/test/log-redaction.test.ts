// Credentials never reach the gateway's logs: the admin token or an API key sent in a URL by
// mistake (query parameter, path, search text) is cut from the access log and the error logs,
// and credential headers are cut from any logged object. The log lines are captured from the
// gateway's own logger. Real MariaDB and Redis, canned upstreams.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '@support-agent/shared';
import { stopAll } from '../../../test/support/testing.js';
import { LogRedactor } from '../src/entry-points/http/log-redaction.js';
import { start, type GatewayHandle } from '../src/server.js';
import {
  orgWithKey,
  request,
  startGatewayBackends,
  testConfig,
  TEST_ADMIN_TOKEN,
  type GatewayBackends,
  type TestGateway,
} from './support/gateway.js';

const lines: string[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  },
});

let backends: GatewayBackends;
let handle: GatewayHandle;
const logger = createLogger('gateway', 'info', sink);
let gw: TestGateway;
let key: string;

/** The log lines written while `fn` ran (the access line is written when the response closes). */
async function logged(fn: () => Promise<unknown>): Promise<string> {
  const from = lines.length;
  await fn();
  await new Promise((resolve) => setTimeout(resolve, 50));
  return lines.slice(from).join('\n');
}

before(async () => {
  backends = await startGatewayBackends('gwlogs');
  const config = testConfig({ ...backends.env, LOG_LEVEL: 'info' });
  handle = await start(config, logger);
  gw = {
    handle,
    config,
    base: `http://127.0.0.1:${handle.port}`,
    adminBase: `http://127.0.0.1:${handle.adminPort}`,
    stop: () => handle.stop(),
  };
  ({ key } = await orgWithKey(gw));
});

after(() => stopAll(gw, backends));

describe('secrets in logs', () => {
  it('when the admin token is sent in a URL, then no log line holds it', async () => {
    const text = await logged(async () => {
      const urls = [
        `${gw.adminBase}/admin/v1/orgs?token=${TEST_ADMIN_TOKEN}`,
        `${gw.adminBase}/admin/v1/orgs?admin_token=${TEST_ADMIN_TOKEN}`,
        `${gw.adminBase}/admin/v1/${TEST_ADMIN_TOKEN}/orgs`,
        `${gw.base}/api/v1/agent/kb/search?query=${TEST_ADMIN_TOKEN}`,
        `${gw.base}/no/such/path/${encodeURIComponent(TEST_ADMIN_TOKEN)}`,
      ];
      for (const url of urls) await request(url, { key });
    });
    assert.match(text, /request completed|status 4\d\d/);
    assert.ok(!text.includes(TEST_ADMIN_TOKEN), text);
    assert.ok(!text.includes('0123456789abcdef'), text);
    assert.match(text, /token=\[redacted\]/);
  });

  it('when an API key is sent in a URL or a credential-named parameter, then it is cut', async () => {
    const text = await logged(async () => {
      await request(`${gw.base}/api/v1/agent/kb/search?query=x&api_key=${key}`, { key });
      await request(`${gw.base}/api/v1/agent/kb/search?query=${key}`, { key });
      await request(`${gw.base}/api/v1/agent/kb/search?query=x&access_token=opaque-secret-42`, {
        key,
      });
    });
    assert.ok(!text.includes(key), text);
    assert.ok(!text.includes('opaque-secret-42'), text);
    assert.match(text, /sak_live_...…\[redacted\]/);
  });

  it('when a logged object carries credential headers, then their values are cut', async () => {
    const text = await logged(async () => {
      logger.warn(
        {
          req: {
            headers: {
              authorization: `Bearer ${key}`,
              'x-api-key': key,
              'x-admin-token': TEST_ADMIN_TOKEN,
              'proxy-authorization': 'Basic c2VjcmV0',
              cookie: 'session=s3cr3t',
            },
          },
        },
        'headers logged',
      );
    });
    assert.match(text, /headers logged/);
    for (const secret of [key, TEST_ADMIN_TOKEN, 'c2VjcmV0', 's3cr3t']) {
      assert.ok(!text.includes(secret), text);
    }
  });

  it('when URLs hold nothing secret, then the redactor leaves them as they are', () => {
    const redactor = new LogRedactor([TEST_ADMIN_TOKEN]);
    for (const url of ['/api/v1/agent/kb/search?query=refund&limit=5', '/healthz', '/a?b', '/a?']) {
      assert.equal(redactor.url(url), url);
    }
    assert.equal(
      redactor.url('/x?sig=abc&q=sa_admin_AbC-123_x'),
      '/x?sig=[redacted]&q=sa_admin_…[redacted]',
    );
  });
});
