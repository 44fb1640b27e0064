import type { Request } from 'express';

/** The external base URL (scheme, host, optional path; no trailing slash) a request was sent to. */
export type BaseUrlOf = (req: Request) => string;

/** `host`, `host:port`, `[v6]` or `[v6]:port`: anything else is not used to build URLs. */
const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?$/;

/**
 * The base URL used in `resource_metadata`, the RFC 9728 metadata and links. With
 * PUBLIC_BASE_URL set it is that URL, always. Unset, it is the address the client used
 * (`Host`, or `X-Forwarded-Proto`/`-Host` when TRUST_PROXY trusts the proxy, as express reads
 * them), so a client on `http://127.0.0.1:8080` gets metadata whose `resource` is the URL it
 * called: MCP clients compare the two (RFC 9728 §3.3). A Host header that is not a plain host
 * name or address falls back to `fallback`.
 */
export function baseUrlResolver(configured: string | undefined, fallback: string): BaseUrlOf {
  if (configured !== undefined) return () => configured;
  return (req) => {
    const host = req.host;
    if (typeof host !== 'string' || !HOST.test(host)) return fallback;
    return `${req.protocol === 'https' ? 'https' : 'http'}://${host.toLowerCase()}`;
  };
}

/** The path of a base URL (`https://x.test/support` → `/support`, an origin → `/`). */
export function basePath(publicBaseUrl: string | undefined): string {
  if (publicBaseUrl === undefined) return '/';
  const path = new URL(publicBaseUrl).pathname.replace(/\/+$/, '');
  return path === '' ? '/' : path;
}
