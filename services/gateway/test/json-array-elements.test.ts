// The sliced JSON-array parser of KB imports gives what JSON.parse gives, and refuses what it
// refuses, while it yields to the event loop on a large array.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TimeSlicer } from '@support-agent/shared';
import {
  NotJsonArray,
  parseJsonArrayInSlices,
} from '../src/entry-points/admin/json-array-elements.js';

const accepted = [
  '[]',
  ' [ ] ',
  '[1]',
  '[1,2 , 3]',
  '\n[\n{"id":"a","answer":"x, ] } [ \\" {"},\n{"id":"b","tags":["t]"]}, 7 ,\n"s", null, true, false, -1.5e3, [[]], {}]\n',
  '["\\\\", "\\\\\\"", "a\\\\"]',
  '[{"a":{"b":[1,{"c":"]"}]}}]',
];
const refused = [
  '',
  '[',
  '[1,]',
  '[,1]',
  '[1 2]',
  '[1,,2]',
  '[1] x',
  '[1][2]',
  '[{]}',
  '[[}]',
  '["a]',
  '["a\\"]',
  '[tru]',
  '[{"a":1}x]',
  '{"a":1}',
  '"[1]"',
];

describe('parseJsonArrayInSlices', () => {
  it('when the text is a JSON array, then it gives what JSON.parse gives', async () => {
    for (const text of accepted) {
      assert.deepEqual(await parseJsonArrayInSlices(text), JSON.parse(text), text);
    }
  });

  it('when the text is not a JSON array, then it throws NotJsonArray', async () => {
    for (const text of refused) {
      await assert.rejects(parseJsonArrayInSlices(text), NotJsonArray, text);
    }
  });

  it('when the array is large, then it yields to the event loop while it parses', async () => {
    const text = JSON.stringify(
      Array.from({ length: 20_000 }, (_, i) => ({ id: `e${i}`, answer: 'x'.repeat(200) })),
    );
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    try {
      const parsed = await parseJsonArrayInSlices(text, new TimeSlicer(1));
      assert.equal(parsed.length, 20_000);
    } finally {
      clearInterval(ticker);
    }
    assert.ok(turns > 0, 'timers ran while the array was parsed');
  });
});
