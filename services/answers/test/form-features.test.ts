// An organization's model reads a ticket's form (form-features.ts): the words its template left
// in HTML comments, the boxes it ticked, its code fences. Pure functions, no service.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mulberry32 } from '@support-agent/shared';
import { formFeatures } from '../src/domain/org-triage/form-features.js';
import { classifyWithOrgModel, loadOrgModel } from '../src/domain/org-triage/org-model.js';
import { trainOrgModel } from '../src/domain/org-triage/train-org-model.js';
import { loadTriageModel } from '../src/domain/triage-model.js';

const builtin = loadTriageModel();
const SHARED = ['the sidebar', 'the export', 'the settings page', 'the search box', 'the editor'];

/** Two templates whose visible text is alike: only the hidden comment names the template. */
function ticket(kind: 'report' | 'wish', random: () => number): string {
  const topic = SHARED[Math.floor(random() * SHARED.length)]!;
  const marker = kind === 'report' ? 'defect_template' : 'wishlist_template';
  return `About ${topic}\n\n<!-- Do not delete: ${marker} -->\nSomething about ${topic} today.`;
}

const tickets = (n: number, seed: number) => {
  const random = mulberry32(seed);
  return Array.from({ length: n }, (_, i) => {
    const label = i % 2 === 0 ? 'report' : 'wish';
    return { text: ticket(label, random), label };
  });
};

describe('form features', () => {
  test('when a ticket has template comments, ticked boxes and code fences, then each is a feature', () => {
    const names = new Map(
      formFeatures(
        'Title\n\n<!-- feature_request_template -->\n- [x] I searched existing issues\n- [ ] not ticked\n```python\nprint(1)\n```\n',
      ),
    );
    assert.ok(names.has('m:feature_request_template'));
    assert.ok(names.has('m:x i searched'));
    assert.ok(![...names.keys()].some((n) => n.includes('ticked')));
    assert.ok(names.has('m:fence python'));
    assert.ok((names.get('m:#fences') ?? 0) > 0);
  });

  test('when categories differ only by the template that made them, then a model reading the form tells them apart and one without it cannot', () => {
    const train = tickets(60, 1);
    const test = tickets(40, 2);
    const accuracy = (form: boolean) => {
      // Template lines off: they too would read the comment's line (template-lines.test.ts).
      const { model } = trainOrgModel(train, ['report', 'wish'], builtin, {
        form,
        templateLines: 0,
        folds: 0,
      });
      assert.equal(model.form === true, form);
      const loaded = loadOrgModel(JSON.parse(JSON.stringify(model)), builtin);
      const right = test.filter((t) => classifyWithOrgModel(loaded, t.text).category === t.label);
      return right.length / test.length;
    };
    assert.equal(accuracy(true), 1);
    assert.ok(accuracy(false) < 0.8);
  });
});
