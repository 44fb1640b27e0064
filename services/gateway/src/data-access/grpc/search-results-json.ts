import { isUtf8 } from 'node:buffer';
import { WireType } from '@bufbuild/protobuf/wire';

// The public SearchResults document (`{"results":[{"question","answer","score"}]}`) written
// straight from the protobuf bytes of a knowledge SearchResponse: the hits' text is copied
// byte for byte (escaped where JSON needs it) instead of being decoded into strings, mapped
// into new objects and encoded again. The output is byte for byte what
// `JSON.stringify({ results: hits.map(({ question, answer, score }) => …) })` gives for the
// decoded message (tested against it).
//
// SearchResponse: 1 repeated SearchHit results. SearchHit: 1 string entry_id (not public),
// 2 string question, 3 string answer, 4 double score. Proto3 rules: a missing field is its
// default ('' or 0), a repeated singular field's last value wins, unknown fields are skipped.

/** SearchHit's field numbers. */
const HIT = { question: 2, answer: 3, score: 4 } as const;

/** Thrown for bytes that are not a well-formed SearchResponse. */
export class MalformedSearchResponse extends Error {}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** JSON.stringify's short escapes for control characters; the rest are \u00XX. */
const SHORT_ESCAPES: Record<number, string> = {
  0x08: '\\b',
  0x09: '\\t',
  0x0a: '\\n',
  0x0c: '\\f',
  0x0d: '\\r',
};
/** The JSON text of each byte that must be escaped; undefined for bytes copied as they are. */
const ESCAPES: (Uint8Array | undefined)[] = Array.from({ length: 256 }, (_, b) => {
  if (b === QUOTE) return Buffer.from('\\"');
  if (b === BACKSLASH) return Buffer.from('\\\\');
  if (b < 0x20) return Buffer.from(SHORT_ESCAPES[b] ?? `\\u${b.toString(16).padStart(4, '0')}`);
  return undefined;
});

/** A cursor over protobuf wire format. */
class WireReader {
  pos: number;

  constructor(
    readonly buf: Buffer,
    start: number,
    readonly end: number,
  ) {
    this.pos = start;
  }

  varint(): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      if (this.pos >= this.end || shift > 63) throw new MalformedSearchResponse('bad varint');
      const b = this.buf[this.pos++]!;
      // Lengths and tags fit in 32 bits; higher bits of longer varints only need skipping.
      if (shift < 32) result += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return result;
      shift += 7;
    }
  }

  /** Start of the next length-delimited field; pos moves past it. */
  delimited(): number {
    const length = this.varint();
    const start = this.pos;
    if (length > this.end - start) throw new MalformedSearchResponse('truncated field');
    this.pos = start + length;
    return start;
  }

  skip(wireType: number): void {
    if (wireType === WireType.Varint) this.varint();
    else if (wireType === WireType.Bit64) this.advance(8);
    else if (wireType === WireType.LengthDelimited) this.delimited();
    else if (wireType === WireType.Bit32) this.advance(4);
    else throw new MalformedSearchResponse(`unsupported wire type ${wireType}`);
  }

  advance(n: number): void {
    if (n > this.end - this.pos) throw new MalformedSearchResponse('truncated field');
    this.pos += n;
  }
}

/** Where one hit's public fields are in the input (start/end of each string, the score). */
interface HitFields {
  qStart: number;
  qEnd: number;
  aStart: number;
  aEnd: number;
  score: number;
  /** Extra bytes the question and the answer take once escaped. */
  qExtra: number;
  aExtra: number;
}

function readHit(buf: Buffer, start: number, end: number): HitFields {
  const r = new WireReader(buf, start, end);
  const hit: HitFields = { qStart: 0, qEnd: 0, aStart: 0, aEnd: 0, score: 0, qExtra: 0, aExtra: 0 };
  while (r.pos < end) {
    const tag = r.varint();
    const field = Math.floor(tag / 8);
    const wireType = tag & 7;
    if ((field === HIT.question || field === HIT.answer) && wireType === WireType.LengthDelimited) {
      const s = r.delimited();
      if (field === HIT.question) {
        hit.qStart = s;
        hit.qEnd = r.pos;
      } else {
        hit.aStart = s;
        hit.aEnd = r.pos;
      }
    } else if (field === HIT.score && wireType === WireType.Bit64) {
      r.advance(8);
      hit.score = buf.readDoubleLE(r.pos - 8);
    } else {
      r.skip(wireType);
    }
  }
  return hit;
}

/** Extra bytes each byte takes once escaped (0 for bytes copied as they are). */
const EXTRA = Uint8Array.from(ESCAPES, (e) => (e ? e.length - 1 : 0));

/** Extra bytes buf[start, end) takes once escaped. */
function escapeExtra(buf: Buffer, start: number, end: number): number {
  let extra = 0;
  for (let i = start; i < end; i++) extra += EXTRA[buf[i]!]!;
  return extra;
}

/** Writes buf[start, end) as a JSON string; `extra` = escapeExtra of it (0: copied whole). */
function writeString(
  out: Buffer,
  at: number,
  buf: Buffer,
  start: number,
  end: number,
  extra: number,
): number {
  out[at++] = QUOTE;
  if (extra === 0) {
    at += buf.copy(out, at, start, end);
  } else {
    let run = start;
    for (let i = start; i < end; i++) {
      const escape = ESCAPES[buf[i]!];
      if (!escape) continue;
      at += buf.copy(out, at, run, i);
      out.set(escape, at);
      at += escape.length;
      run = i + 1;
    }
    at += buf.copy(out, at, run, end);
  }
  out[at++] = QUOTE;
  return at;
}

const OPEN = Buffer.from('{"results":[');
const CLOSE = Buffer.from(']}');
const QUESTION_KEY = Buffer.from('{"question":');
const ANSWER_KEY = Buffer.from(',"answer":');
const SCORE_KEY = Buffer.from(',"score":');
const HIT_CLOSE = '}';

/**
 * The public SearchResults JSON of a SearchResponse given as protobuf bytes, or undefined when
 * a hit's text is not valid UTF-8 (the caller then decodes it the usual way, which replaces
 * such bytes as JSON.stringify would see them). Throws MalformedSearchResponse on bytes that
 * are not a SearchResponse.
 */
export function searchResultsJson(pb: Buffer): Buffer | undefined {
  const top = new WireReader(pb, 0, pb.length);
  const hits: HitFields[] = [];
  while (top.pos < pb.length) {
    const tag = top.varint();
    if (tag === (1 << 3) + WireType.LengthDelimited) {
      const start = top.delimited();
      hits.push(readHit(pb, start, top.pos));
    } else {
      top.skip(tag & 7);
    }
  }
  const scores = hits.map((h) => (Number.isFinite(h.score) ? String(h.score) : 'null'));
  let length = OPEN.length + CLOSE.length + Math.max(0, hits.length - 1);
  for (let i = 0; i < hits.length; i++) {
    const h = hits[i]!;
    if (!isUtf8(pb.subarray(h.qStart, h.qEnd)) || !isUtf8(pb.subarray(h.aStart, h.aEnd))) {
      return undefined;
    }
    h.qExtra = escapeExtra(pb, h.qStart, h.qEnd);
    h.aExtra = escapeExtra(pb, h.aStart, h.aEnd);
    length +=
      QUESTION_KEY.length +
      h.qEnd -
      h.qStart +
      h.qExtra +
      2 +
      ANSWER_KEY.length +
      h.aEnd -
      h.aStart +
      h.aExtra +
      2 +
      SCORE_KEY.length +
      scores[i]!.length +
      HIT_CLOSE.length;
  }
  const out = Buffer.allocUnsafe(length);
  let at = OPEN.copy(out, 0);
  for (let i = 0; i < hits.length; i++) {
    const h = hits[i]!;
    if (i > 0) out[at++] = 0x2c; // ,
    at += QUESTION_KEY.copy(out, at);
    at = writeString(out, at, pb, h.qStart, h.qEnd, h.qExtra);
    at += ANSWER_KEY.copy(out, at);
    at = writeString(out, at, pb, h.aStart, h.aEnd, h.aExtra);
    at += SCORE_KEY.copy(out, at);
    at += out.write(scores[i]!, at, 'latin1');
    out[at++] = 0x7d; // }
  }
  at += CLOSE.copy(out, at);
  if (at !== length) throw new Error(`search results JSON: wrote ${at} of ${length} bytes`);
  return out;
}

/** SearchBatchResult's error_code field: present and non-empty only on a failed search. */
const ERROR_CODE_TAG = (2 << 3) + WireType.LengthDelimited;

/**
 * The items of a SearchBatchResponse given as protobuf bytes, in order: each a view of its
 * SearchBatchResult's bytes when the search succeeded (its field 1 holds the hits as a
 * SearchResponse's does, and its other fields are then absent or empty, so searchResultsJson
 * reads it as one), or `failed` with the item's bytes when its error_code is set. Throws
 * MalformedSearchResponse on bytes that are not a SearchBatchResponse.
 */
export function searchBatchItems(pb: Buffer): ({ ok: Buffer } | { failed: Buffer })[] {
  const top = new WireReader(pb, 0, pb.length);
  const items: ({ ok: Buffer } | { failed: Buffer })[] = [];
  while (top.pos < pb.length) {
    const tag = top.varint();
    if (tag !== (1 << 3) + WireType.LengthDelimited) {
      top.skip(tag & 7);
      continue;
    }
    const start = top.delimited();
    const item = pb.subarray(start, top.pos);
    const r = new WireReader(pb, start, top.pos);
    let failed = false;
    while (r.pos < r.end) {
      const field = r.varint();
      if (field === ERROR_CODE_TAG) {
        // Proto3: the last value of a repeated singular field wins.
        const s = r.delimited();
        failed = r.pos > s;
      } else {
        r.skip(field & 7);
      }
    }
    items.push(failed ? { failed: item } : { ok: item });
  }
  return items;
}
