import assert from 'node:assert/strict';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { describe, it } from 'node:test';
import {
  API_KEY_LENGTH,
  checksumOf,
  crc32,
  displayPrefix,
  generateApiKey,
  hashApiKey,
  hashesEqual,
  isWellFormedApiKey,
  toBase62,
} from '../src/domain/api-keys.js';
import { readBearer } from '../src/entry-points/http/auth.js';

describe('API key format', () => {
  it('when a key is generated, then it is sak_live_ + 32 base62 + 6 base62 checksum chars', () => {
    const key = generateApiKey();
    assert.match(key, /^sak_live_[0-9A-Za-z]{32}[0-9A-Za-z]{6}$/);
    assert.equal(key.length, API_KEY_LENGTH);
    assert.equal(key.slice(-6), toBase62(crc32(key.slice(9, 41)), 6));
  });

  it('when many keys are generated, then all are distinct and well formed', () => {
    const keys = new Set(Array.from({ length: 2000 }, generateApiKey));
    assert.equal(keys.size, 2000);
    for (const k of keys) assert.ok(isWellFormedApiKey(k), k);
  });

  it('when the checksum is computed, then it is CRC-32 (as zlib) in base62 left-padded to 6', () => {
    assert.equal(crc32('123456789'), 0xcbf43926); // the standard CRC-32 check value
    if (typeof zlibCrc32 === 'function') assert.equal(crc32('abcXYZ'), zlibCrc32('abcXYZ'));
    assert.equal(toBase62(0, 6), '000000');
    assert.equal(toBase62(61, 6), '00000z');
    assert.equal(toBase62(62, 6), '000010');
    assert.equal(toBase62(0xffffffff, 6), '4gfFC3');
    assert.equal(checksumOf('a'.repeat(32)).length, 6);
  });

  it('when one character of the random part or checksum changes, then the key is rejected', () => {
    const key = generateApiKey();
    for (const i of [9, 20, 40, 41, 46]) {
      const c = key[i] === 'A' ? 'B' : 'A';
      assert.equal(
        isWellFormedApiKey(key.slice(0, i) + c + key.slice(i + 1)),
        false,
        `position ${i}`,
      );
    }
  });

  it('when a key has the wrong prefix, length or alphabet, then it is rejected', () => {
    const key = generateApiKey();
    assert.equal(isWellFormedApiKey(key.replace('sak_live_', 'sak_test_')), false);
    assert.equal(isWellFormedApiKey(key + 'a'), false);
    assert.equal(isWellFormedApiKey(key.slice(0, -1)), false);
    assert.equal(isWellFormedApiKey(key.replace(/.$/, '-')), false);
    assert.equal(isWellFormedApiKey(''), false);
    assert.equal(isWellFormedApiKey(` ${key}`), false);
  });

  it('when a key is hashed, then the hash is SHA-256 hex and comparison is exact', () => {
    const key = generateApiKey();
    const hash = hashApiKey(key);
    assert.match(hash, /^[0-9a-f]{64}$/);
    assert.ok(hashesEqual(hash, hashApiKey(key)));
    assert.equal(hashesEqual(hash, hashApiKey(generateApiKey())), false);
    assert.equal(hashesEqual(hash, hash.slice(1)), false);
    assert.equal(displayPrefix(key), key.slice(0, 12));
  });
});

describe('Authorization header parsing', () => {
  it('when the scheme is Bearer in any case, then the key is read', () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
      assert.deepEqual(readBearer(`${scheme} abc`), {
        presented: true,
        key: 'abc',
        headerSent: true,
      });
    }
    assert.equal(readBearer('Bearer   abc  ').key, 'abc');
  });

  it('when there is no header, another scheme or an empty credential, then no key is presented', () => {
    assert.equal(readBearer(undefined).presented, false);
    assert.equal(readBearer('').headerSent, false);
    assert.deepEqual(readBearer('Basic dXNlcjpwYXNz'), {
      presented: false,
      key: undefined,
      headerSent: true,
    });
    assert.equal(readBearer('Bearer').presented, false);
    assert.equal(readBearer('Bearer    ').presented, false);
  });
});
