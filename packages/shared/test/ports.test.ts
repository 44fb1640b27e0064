import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig, portBaseDefaults, withPortBase, z } from '../src/index.js';

describe('PORT_BASE', () => {
  it('when PORT_BASE is set, then every listener of the stack gets its slot, metrics per service', () => {
    assert.deepEqual(portBaseDefaults({ PORT_BASE: '18500' }, 'gateway'), {
      PORT: '18500',
      ADMIN_PORT: '18501',
      TICKETS_ADDR: '127.0.0.1:18511',
      KNOWLEDGE_ADDR: '127.0.0.1:18512',
      ANSWERS_ADDR: '127.0.0.1:18513',
      DIGEST_ADDR: '127.0.0.1:18514',
      METRICS_PORT: '18525',
    });
    const metrics = ['tickets', 'knowledge', 'answers', 'digest'] as const;
    assert.deepEqual(
      metrics.map((s) => portBaseDefaults({ PORT_BASE: '18500' }, s).METRICS_PORT),
      ['18521', '18522', '18523', '18524'],
    );
    assert.deepEqual(portBaseDefaults({}, 'tickets'), {});
  });

  it('when a variable is set explicitly, then it wins over the layout; an empty one does not', () => {
    const env = withPortBase({ PORT_BASE: '20000', PORT: '9999', TICKETS_ADDR: '' }, 'answers');
    assert.equal(env.PORT, '9999');
    assert.equal(env.TICKETS_ADDR, '127.0.0.1:20011');
    assert.equal(env.METRICS_PORT, '20023');
  });

  it('when PORT_BASE is not a port leaving room for the layout, then the config is refused naming it', () => {
    const schema = z.object({ PORT: z.coerce.number() });
    for (const bad of ['abc', '0', '-1', '65520', '8080.5']) {
      assert.throws(
        () => loadConfig(schema, { PORT_BASE: bad }, { service: 'gateway' }),
        (err: Error) => err instanceof ConfigError && /PORT_BASE/.test(err.message),
        bad,
      );
    }
    assert.equal(loadConfig(schema, { PORT_BASE: '65510' }, { service: 'gateway' }).PORT, 65510);
  });
});
