import { isIP } from 'node:net';

/** A service address its callers dial: the grpc-js target and the endpoints it names. */
export interface GrpcTarget {
  /** What grpc-js dials: `host:port`, `dns:///name:port`, or `ipv4:`/`ipv6:` with a list. */
  address: string;
  /** The `host:port` endpoints as written (one for a name: DNS gives its addresses). */
  endpoints: string[];
}

const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[^\s:,[\]]+):(\d{1,5})$/;

/**
 * Parses the address a caller dials for a service (`TICKETS_ADDR`, …):
 * - `host:port`: one endpoint, or every address of a DNS name (a headless Kubernetes Service,
 *   a Compose service with several replicas); calls are spread over them (round_robin);
 * - `dns:///name:port`: the same, spelt as grpc-js does;
 * - `ip:port,ip:port,…`: several replicas at fixed IP addresses (IPv6 as `[::1]:port`), all of
 *   one family; a dead one is skipped until it answers again.
 * A list of host names is refused: grpc-js resolves one name per channel, so several replicas
 * behind names need one name that resolves to all of them.
 */
export function parseGrpcTarget(text: string): GrpcTarget | { error: string } {
  const value = text.trim();
  if (value.startsWith('dns:')) {
    const rest = value.replace(/^dns:(\/\/[^/]*\/)?/, '');
    if (!HOST_PORT.test(rest)) return { error: 'expected dns:///host:port' };
    return { address: value, endpoints: [rest] };
  }
  const parts = value.split(',').map((p) => p.trim());
  const endpoints: string[] = [];
  for (const part of parts) {
    const m = HOST_PORT.exec(part);
    if (!m || Number(m[2]) > 65535) {
      return { error: `expected host:port or a comma-separated list of ip:port, got "${part}"` };
    }
    endpoints.push(part);
  }
  if (endpoints.length === 1) return { address: endpoints[0]!, endpoints };
  const families = new Set(
    endpoints.map((e) => isIP(e.slice(0, e.lastIndexOf(':')).replace(/^\[|\]$/g, ''))),
  );
  if (families.has(0)) {
    return {
      error:
        'a list takes IP addresses only (ip:port,ip:port); for replicas behind host names give one name that resolves to all of them',
    };
  }
  if (families.size > 1) return { error: 'a list takes IPv4 or IPv6 addresses, not both' };
  const scheme = families.has(6) ? 'ipv6' : 'ipv4';
  if (new Set(endpoints).size !== endpoints.length) return { error: 'an endpoint is listed twice' };
  return { address: `${scheme}:${endpoints.join(',')}`, endpoints };
}
