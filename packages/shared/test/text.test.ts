// The contract's text rules (DESIGN.md §3) that every service applies through packages/shared.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { codePointLength, isBlank, truncateCodePoints } from '../src/index.js';

test('when a text has emoji, astral letters or combining marks, then each code point counts 1', () => {
  assert.equal(codePointLength(''), 0);
  assert.equal(codePointLength('abc'), 3);
  assert.equal(codePointLength('a😀𝒜'), 3); // 5 UTF-16 units
  assert.equal(codePointLength('e\u0301'), 2); // a combining accent is a code point of its own
  // Lone surrogates count 1 each, as iterating the string does.
  for (const text of ['\ud800', 'a\udfff', '\ud800\ud800\udc00', '\udc00\ud800', 'x\ud83d'])
    assert.equal(codePointLength(text), [...text].length, JSON.stringify(text));
});

test('when a value is undefined, null, empty or only white space, then it is blank; any other text is not', () => {
  for (const blank of [undefined, null, '', ' ', '\t\n ', '\u00a0'])
    assert.equal(isBlank(blank), true);
  for (const text of ['a', ' a ', '0', '😀']) assert.equal(isBlank(text), false);
});

test('when a text is cut to a number of code points, then no surrogate pair is split and short texts stay whole', () => {
  assert.equal(truncateCodePoints('abc', 3), 'abc');
  assert.equal(truncateCodePoints('abcd', 3), 'abc');
  assert.equal(truncateCodePoints('😀😀😀', 2), '😀😀'); // 6 UTF-16 units, 3 code points
  assert.equal(truncateCodePoints('a😀b', 2), 'a😀');
  assert.equal(truncateCodePoints('', 0), '');
});
