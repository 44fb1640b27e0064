import { isUtf8 } from 'node:buffer';
import { invalidRequest } from '@support-agent/shared';
import type { Request, RequestHandler } from 'express';

const INVALID_SEQUENCE = 'such as an encoded lone surrogate, %ED%A0%80';

/** The bytes a percent-encoded URL part stands for (a stray '%' stays as it is). */
function percentDecoded(part: string): Buffer {
  return Buffer.from(
    part.replace(/%([0-9A-Fa-f]{2})|[^%]+|%/g, (m: string, hex: string | undefined) =>
      hex === undefined ? m : String.fromCharCode(Number.parseInt(hex, 16)),
    ),
    'latin1',
  );
}

/** A parameter name for error messages (best effort). */
function decodeQueryComponent(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

/**
 * The URL must be percent-encoded UTF-8 (RFC 3986): raw bytes outside visible ASCII in the
 * query, or escapes that decode to invalid UTF-8 (an encoded lone surrogate among them) in the
 * query or the path, are a 400 naming the parameter (or `path`). The query parser and the
 * router would turn them into U+FFFD or Latin-1 characters, and the request would run on text
 * the client never sent. URLs without '%' cost one indexOf.
 */
export function requireUtf8Url(req: Request): void {
  const url = req.originalUrl;
  const at = url.indexOf('?');
  const path = at < 0 ? url : url.slice(0, at);
  if (path.includes('%') && !isUtf8(percentDecoded(path))) {
    throw invalidRequest(
      `the URL path must be percent-encoded UTF-8 (it holds an invalid sequence, ${INVALID_SEQUENCE})`,
      'path',
    );
  }
  if (at < 0) return;
  const query = url.slice(at + 1);
  if (/[^\x21-\x7e]/.test(query)) {
    throw invalidRequest('the query string must be percent-encoded (RFC 3986)');
  }
  if (!query.includes('%')) return;
  // The common case, natively: decodeURIComponent accepts only well-formed escapes of valid
  // UTF-8 ('&' and '=' stay literal, so no sequence spans two parameters). A query it refuses
  // is examined parameter by parameter (a stray '%' is allowed, invalid UTF-8 is not).
  try {
    decodeURIComponent(query);
    return;
  } catch {
    // examined below
  }
  for (const pair of query.split('&')) {
    const eq = pair.indexOf('=');
    const name = eq < 0 ? pair : pair.slice(0, eq);
    for (const part of eq < 0 ? [name] : [name, pair.slice(eq + 1)]) {
      if (!part.includes('%') || isUtf8(percentDecoded(part))) continue;
      throw invalidRequest(
        `query parameters must be UTF-8 once percent-decoded (it holds an invalid sequence, ${INVALID_SEQUENCE})`,
        decodeQueryComponent(name),
      );
    }
  }
}

/** requireUtf8Url as a middleware (the admin listener runs it before any route). */
export const utf8Url: RequestHandler = (req, _res, next) => {
  requireUtf8Url(req);
  next();
};
