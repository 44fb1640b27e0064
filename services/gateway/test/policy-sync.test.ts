import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '@support-agent/shared';
import { defaultSettings } from '../src/domain/settings.js';
import { OrgPolicySync, type PolicyReceiver } from '../src/domain/policy-sync.js';

type Push = Parameters<PolicyReceiver['setOrgPolicy']>[0];

function receiver(failures: number): PolicyReceiver & { delivered: Push[]; attempts: number } {
  const r = {
    delivered: [] as Push[],
    attempts: 0,
    async setOrgPolicy(req: Push) {
      r.attempts++;
      if (r.attempts <= failures) throw new Error('answers unavailable');
      r.delivered.push(req);
      return {};
    },
  };
  return r;
}

const logger = createLogger('test', 'silent');
const waitUntil = async (cond: () => boolean, ms = 2000) => {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('answer policy sync', () => {
  it('when the answers service is up, then a settings change is pushed at once', async () => {
    const r = receiver(0);
    const sync = new OrgPolicySync(r, logger);
    await sync.publish('acme', { ...defaultSettings(new Date()), highConfidenceThreshold: 90 });
    assert.deepEqual(r.delivered, [
      { orgId: 'acme', policy: { deflectionMonthlyLimit: 1000, highConfidenceThreshold: 90 } },
    ]);
    sync.stop();
  });

  it('when pushes fail, then they are retried in the background and the latest settings win', async () => {
    const r = receiver(3);
    const sync = new OrgPolicySync(r, logger, { minRetryMs: 10, maxRetryMs: 40 });
    await sync.publish('acme', { ...defaultSettings(new Date()), deflectionMonthlyLimit: 5 });
    await sync.publish('acme', { ...defaultSettings(new Date()), deflectionMonthlyLimit: 6 });
    await waitUntil(() => r.delivered.length > 0);
    await new Promise((res) => setTimeout(res, 100));
    assert.deepEqual(r.delivered, [
      {
        orgId: 'acme',
        policy: {
          deflectionMonthlyLimit: 6,
          highConfidenceThreshold: defaultSettings(new Date()).highConfidenceThreshold,
        },
      },
    ]);
    sync.stop();
  });
});
