// First-run bootstrap of a deployment: the compose service `init` and the Kubernetes Job
// `bootstrap` both run this file from the gateway image (`node /app/deploy/bootstrap.mjs`).
//
// It waits for the gateway (admin API and public API), creates the first organization and an
// API key holding every scope the gateway publishes, and prints that key once. It is
// idempotent: when the organization already has a key named BOOTSTRAP_KEY_NAME (revoked or
// not), it changes nothing and exits 0, so it is safe on every `docker compose up` and every
// `kubectl apply`. An organization left without that key by an interrupted earlier run gets it.
//
// Environment (no dependencies beyond Node 20, so it runs anywhere the gateway runs):
//   ADMIN_TOKEN                 required, the gateway's admin bearer token
//   ADMIN_URL                   admin API base URL            (default http://127.0.0.1:$ADMIN_PORT)
//   GATEWAY_URL                 public API base URL, for the scope catalogue (default http://127.0.0.1:$PORT)
//   ADMIN_PORT, PORT, PORT_BASE the gateway's own port settings, read as the gateway reads them
//                               (an explicit port wins; else PORT_BASE + 1 and PORT_BASE; else 8081, 8080)
//   BOOTSTRAP_ORG_ID            organization id (slug)        (default "default")
//   BOOTSTRAP_ORG_NAME          organization display name     (default "Default organization")
//   BOOTSTRAP_KEY_NAME          name of the key it creates    (default "bootstrap")
//   BOOTSTRAP_TIMEOUT_SECONDS   how long to wait for the gateway (default 300)
//   PUBLIC_BASE_URL             only used in the printed curl example
//
// Output: progress lines prefixed "bootstrap:", and on creation one machine-readable line
// `SUPPORT_AGENT_API_KEY=sak_live_…`. Exit 0 on success or nothing to do, 1 on any failure.

const env = process.env;
const adminUrl = trimSlash(
  env.ADMIN_URL || `http://127.0.0.1:${gatewayPort('ADMIN_PORT', 1, 8081)}`,
);
const gatewayUrl = trimSlash(env.GATEWAY_URL || `http://127.0.0.1:${gatewayPort('PORT', 0, 8080)}`);
const adminToken = env.ADMIN_TOKEN || '';
const orgId = env.BOOTSTRAP_ORG_ID || 'default';
const orgName = env.BOOTSTRAP_ORG_NAME || 'Default organization';
const keyName = env.BOOTSTRAP_KEY_NAME || 'bootstrap';
const timeoutMs = Number(env.BOOTSTRAP_TIMEOUT_SECONDS || 300) * 1000;
const publicBaseUrl = trimSlash(env.PUBLIC_BASE_URL || gatewayUrl);

const RETRY_MS = 2000;
const REQUEST_TIMEOUT_MS = 5000;

class Fatal extends Error {}

/**
 * A gateway port as the gateway itself picks it (packages/shared/src/ports.ts, which this
 * dependency-free script cannot import): the variable when set, else PORT_BASE + offset, else
 * the default.
 */
function gatewayPort(name, offset, fallback) {
  if (env[name]) return env[name];
  const base = Number(env.PORT_BASE);
  return env.PORT_BASE && Number.isInteger(base) && base > 0 ? base + offset : fallback;
}

function trimSlash(url) {
  return url.replace(/\/+$/, '');
}

function log(message) {
  process.stdout.write(`bootstrap: ${message}\n`);
}

/** One HTTP call with a timeout; resolves to {status, body} (body parsed when JSON). */
async function request(method, url, body) {
  const headers = { accept: 'application/json' };
  if (url.startsWith(adminUrl)) headers.authorization = `Bearer ${adminToken}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await res.text();
  let parsed = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text for the error message
  }
  return { status: res.status, body: parsed };
}

function describe(res) {
  const message = res.body?.error?.message ?? JSON.stringify(res.body);
  return `HTTP ${res.status}: ${message}`;
}

/**
 * GETs url until it answers 200, retrying connection errors and 5xx (the gateway or its
 * upstreams are still starting) until the deadline. 401/403 are final: a wrong ADMIN_TOKEN
 * does not fix itself.
 */
async function waitFor(what, url, deadline) {
  let lastProblem = 'no attempt yet';
  let announced = false;
  for (;;) {
    try {
      const res = await request('GET', url);
      if (res.status === 200) return res.body;
      if (res.status === 401 || res.status === 403) {
        throw new Fatal(`${what} rejected ADMIN_TOKEN (${describe(res)})`);
      }
      lastProblem = describe(res);
    } catch (err) {
      if (err instanceof Fatal) throw err;
      lastProblem = err?.cause?.code ?? err?.message ?? String(err);
    }
    if (Date.now() + RETRY_MS > deadline) {
      throw new Fatal(
        `${what} at ${url} not available after ${timeoutMs / 1000} s: ${lastProblem}`,
      );
    }
    if (!announced) {
      log(`waiting for ${what} at ${url} (${lastProblem})`);
      announced = true;
    }
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  }
}

async function expect(status, method, url, body) {
  const res = await request(method, url, body);
  if (!status.includes(res.status)) throw new Fatal(`${method} ${url} failed: ${describe(res)}`);
  return res;
}

async function main() {
  if (adminToken.length < 16) throw new Fatal('ADMIN_TOKEN is required (at least 16 characters)');
  if (!/^[a-z0-9][a-z0-9-]{1,62}$/.test(orgId)) {
    throw new Fatal(`BOOTSTRAP_ORG_ID "${orgId}" is not a slug (^[a-z0-9][a-z0-9-]{1,62}$)`);
  }
  const deadline = Date.now() + timeoutMs;
  const { orgs } = await waitFor('gateway admin API', `${adminUrl}/admin/v1/orgs`, deadline);
  const metadata = await waitFor(
    'gateway public API',
    `${gatewayUrl}/.well-known/oauth-protected-resource`,
    deadline,
  );
  const scopes = metadata?.scopes_supported;
  if (!Array.isArray(scopes) || scopes.length === 0) {
    throw new Fatal('the gateway published no scopes_supported');
  }

  const orgPath = `${adminUrl}/admin/v1/orgs/${encodeURIComponent(orgId)}`;
  if (orgs.some((org) => org.id === orgId)) {
    const { body } = await expect([200], 'GET', `${orgPath}/keys`);
    const existing = body.keys.filter((key) => key.name === keyName);
    if (existing.length > 0) {
      log(
        `organization "${orgId}" already has key "${keyName}" (${existing[0].prefix}…): nothing to do. ` +
          `More keys (in the gateway container): node dist/cli/admin.js keys create ${orgId} --scopes ${scopes.join(',')}`,
      );
      return;
    }
    log(`organization "${orgId}" exists without key "${keyName}": creating it`);
  } else {
    const res = await expect([201, 409], 'POST', `${adminUrl}/admin/v1/orgs`, {
      id: orgId,
      name: orgName,
    });
    log(
      res.status === 201
        ? `created organization "${orgId}" (${orgName})`
        : `organization "${orgId}" was created concurrently; continuing`,
    );
  }

  const { body: created } = await expect([201], 'POST', `${orgPath}/keys`, {
    name: keyName,
    scopes,
  });
  log(`created API key ${created.id} with scopes ${created.scopes.join(', ')}`);
  log('store the key now: it is shown only this once');
  process.stdout.write(`SUPPORT_AGENT_API_KEY=${created.key}\n`);
  log(
    `try: curl -H "Authorization: Bearer $SUPPORT_AGENT_API_KEY" "${publicBaseUrl}/api/v1/agent/kb/search?query=password+reset"`,
  );
}

main().catch((err) => {
  process.stderr.write(`bootstrap: failed: ${err instanceof Fatal ? err.message : err?.stack}\n`);
  process.exit(1);
});
