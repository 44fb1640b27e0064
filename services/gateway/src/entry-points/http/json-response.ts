import type { Response } from 'express';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Writes a JSON body that is already serialized, with the headers express's `res.json` sets
 * (`Content-Type: application/json; charset=utf-8`, `Content-Length`; no ETag, the apps turn
 * it off). `res.json` re-checks the content type, parses it to add the charset, converts the
 * body and evaluates freshness on every call: measurable on the hot path, and none of it
 * applies here. HEAD gets the headers only (Node drops the body of a HEAD response).
 */
export function sendJson(res: Response, status: number, body: string | Uint8Array): void {
  res.statusCode = status;
  res.setHeader('Content-Type', JSON_TYPE);
  res.setHeader(
    'Content-Length',
    typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength,
  );
  res.end(body);
}
