// An organization's model reads the lines its templates put in many tickets (template-lines.ts):
// a form's headings and the value picked under each. Pure functions, no service.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mulberry32 } from '@support-agent/shared';
import { classifyWithOrgModel, loadOrgModel } from '../src/domain/org-triage/org-model.js';
import {
  learnTemplateLines,
  templateLineFeatures,
} from '../src/domain/org-triage/template-lines.js';
import { trainOrgModel } from '../src/domain/org-triage/train-org-model.js';
import { loadTriageModel } from '../src/domain/triage-model.js';

const builtin = loadTriageModel();
const FILLER = ['the sidebar', 'the export', 'the settings page', 'the search box', 'the editor'];

/**
 * An issue form with two questions answered Yes or No, in either order: a report says it
 * crashes and is not slow, a wish the other way round. Every ticket holds the same words.
 */
function ticket(kind: 'report' | 'wish', random: () => number): string {
  const pick = () => FILLER[Math.floor(random() * FILLER.length)]!;
  const answer = (yes: boolean) => (yes ? 'Yes' : 'No');
  const sections = [
    `### Does it crash?\n\nAnswer below\n\n${answer(kind === 'report')}\n\nSee also ${pick()}`,
    `### Is it slow?\n\nAnswer below\n\n${answer(kind === 'wish')}\n\nSee also ${pick()}`,
  ];
  if (random() < 0.5) sections.reverse();
  return `About ${pick()}\n\n${sections.join('\n\n')}`;
}

const tickets = (n: number, seed: number) => {
  const random = mulberry32(seed);
  return Array.from({ length: n }, (_, i) => {
    const label = i % 2 === 0 ? 'report' : 'wish';
    return { text: ticket(label, random), label };
  });
};

describe('template lines', () => {
  test('when lines recur in many tickets, then they and the value under each heading are learned, and rare lines and code are not', () => {
    const texts = [
      ...Array.from(
        { length: 20 },
        (_, i) =>
          `Title ${i}\n\n### OS\n\nLinux\n\nmy own words ${i}\n\`\`\`\nfrequent code line\n\`\`\``,
      ),
      'Title\n\n### OS\n\nWindows',
    ];
    const lines = learnTemplateLines(texts);
    assert.ok(lines.includes('### os'));
    assert.ok(lines.includes('### os | linux'));
    assert.ok(!lines.includes('### os | windows'), 'a line in 1 of 21 tickets');
    assert.ok(!lines.some((l) => l.includes('frequent code')), 'lines inside code fences');
    assert.ok(!lines.some((l) => l.startsWith('title')));
    const features = new Map(templateLineFeatures('### OS\n\nLinux\n\nother', new Set(lines)));
    assert.deepEqual([...features.keys()].sort(), ['s:### os', 's:### os | linux', 's:linux']);
    assert.ok(Math.abs([...features.values()][0]! - 1 / Math.sqrt(3)) < 1e-9);
  });

  test('when categories differ only by the values picked in a form, then a model reading template lines tells them apart and one without them cannot', () => {
    const train = tickets(80, 1);
    const test = tickets(40, 2);
    const accuracy = (templateLines: number) => {
      const { model } = trainOrgModel(train, ['report', 'wish'], builtin, {
        templateLines,
        folds: 0,
      });
      assert.equal((model.templateLines?.length ?? 0) > 0, templateLines > 0);
      const loaded = loadOrgModel(JSON.parse(JSON.stringify(model)), builtin);
      const right = test.filter((t) => classifyWithOrgModel(loaded, t.text).category === t.label);
      return right.length / test.length;
    };
    assert.equal(accuracy(0.03), 1);
    assert.ok(accuracy(0) < 0.8);
  });

  test('when a model file has malformed template lines, then loading it fails', () => {
    const { model } = trainOrgModel(tickets(20, 3), ['report', 'wish'], builtin, { folds: 0 });
    assert.throws(
      () => loadOrgModel({ ...model, templateLines: [1, 2] }, builtin),
      /bad template lines/,
    );
  });
});
