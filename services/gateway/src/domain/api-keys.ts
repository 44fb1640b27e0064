import { createHash, randomInt, timingSafeEqual } from 'node:crypto';

// Key format: sak_live_ + 32 random base62 chars + 6 base62 chars of CRC32(random part).
// The checksum lets the gateway reject typos and garbage without touching storage, and lets
// secret scanners recognise a real key (the scheme GitHub uses for its tokens).
export const API_KEY_PREFIX = 'sak_live_';
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
export const API_KEY_LENGTH = API_KEY_PREFIX.length + RANDOM_LENGTH + CHECKSUM_LENGTH;
/** Characters of a key kept for display (`sak_live_Ab3`). */
export const DISPLAY_PREFIX_LENGTH = 12;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_PATTERN = new RegExp(
  `^${API_KEY_PREFIX}([0-9A-Za-z]{${RANDOM_LENGTH}})([0-9A-Za-z]{${CHECKSUM_LENGTH}})$`,
);

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (IEEE 802.3, as zlib) of a string's UTF-8 bytes. */
export function crc32(text: string): number {
  let crc = 0xffffffff;
  for (const byte of Buffer.from(text, 'utf8')) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** Base62 of a non-negative integer, left-padded with '0' to `width`. */
export function toBase62(value: number, width: number): string {
  let out = '';
  let n = value;
  do {
    out = BASE62[n % 62]! + out;
    n = Math.floor(n / 62);
  } while (n > 0);
  return out.padStart(width, '0');
}

/** `length` uniformly random characters of `alphabet` (crypto.randomInt: no modulo bias). */
function randomChars(alphabet: string, length: number): string {
  return Array.from({ length }, () => alphabet[randomInt(alphabet.length)]).join('');
}

export function checksumOf(randomPart: string): string {
  return toBase62(crc32(randomPart), CHECKSUM_LENGTH);
}

/** A new plain API key; shown to its owner once, stored only as hashApiKey(key). */
export function generateApiKey(): string {
  const random = randomChars(BASE62, RANDOM_LENGTH);
  return `${API_KEY_PREFIX}${random}${checksumOf(random)}`;
}

/** True when the key has the right shape and checksum (no storage involved). */
export function isWellFormedApiKey(key: string): boolean {
  const m = KEY_PATTERN.exec(key);
  return m !== null && checksumOf(m[1]!) === m[2];
}

/** SHA-256 hex: the only form in which keys are stored and looked up. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Constant-time comparison of two hex hashes. */
export function hashesEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  return ba.length === bb.length && timingSafeEqual(ba, bb);
}

export function displayPrefix(key: string): string {
  return key.slice(0, DISPLAY_PREFIX_LENGTH);
}

/** Lower-case alphanumeric id with a type prefix, e.g. `key_4f0c…`, `org_9a1b…`. */
export function randomId(prefix: string, length = 20): string {
  return `${prefix}_${randomChars('0123456789abcdefghijklmnopqrstuvwxyz', length)}`;
}
