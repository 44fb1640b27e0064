// METRICS_PORT and its former name DIGEST_METRICS_PORT: the current name wins whenever it is
// set (so METRICS_PORT=0 turns the endpoint off whatever an old deployment still sets), the
// former name stands in when it is not, and PORT_BASE's layout comes last, as for every port.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadDigestConfig, metricsPort } from '../src/config.js';

const port = (env: Record<string, string>) =>
  metricsPort(loadDigestConfig({ EMBEDDED: 'true', ...env }));

describe('the digest metrics port', () => {
  it('when METRICS_PORT=0 and the former DIGEST_METRICS_PORT are both set, then metrics are off', () => {
    assert.equal(port({ METRICS_PORT: '0', DIGEST_METRICS_PORT: '9464' }), 0);
  });

  it('when both are set to ports, then METRICS_PORT wins', () => {
    assert.equal(port({ METRICS_PORT: '9500', DIGEST_METRICS_PORT: '9464' }), 9500);
  });

  it('when only the former name is set, then it is used, also over the PORT_BASE layout', () => {
    assert.equal(port({ DIGEST_METRICS_PORT: '9501' }), 9501);
    assert.equal(port({ DIGEST_METRICS_PORT: '9501', PORT_BASE: '20000' }), 9501);
  });

  it('when neither is set, then PORT_BASE places it (digest: +24), else the default 9464', () => {
    assert.equal(port({ PORT_BASE: '20000' }), 20024);
    assert.equal(port({}), 9464);
    assert.equal(port({ METRICS_PORT: '', DIGEST_METRICS_PORT: '' }), 9464);
  });
});
