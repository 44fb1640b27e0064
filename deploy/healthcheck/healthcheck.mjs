// The images' HEALTHCHECK: `node /app/healthcheck.mjs <service>` exits 0 when the service in
// this container serves, 1 otherwise.
//
// It asks at the address the service itself listens on, read through the service's own
// configuration (its zod schema and the shared loader: defaults, PORT_BASE, explicit
// variables), so the check follows the ports wherever they are configured and names none:
//   gateway                               GET http://<HOST>:<PORT>/readyz
//   tickets, knowledge, answers, digest   grpc.health.v1 Check at <SERVICE>_ADDR
// A wildcard listen host (0.0.0.0) is asked on 127.0.0.1.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { checkHealth, loadConfig, STACK_SERVICES } from '@support-agent/shared';

const TIMEOUT_MS = 4_000;

const service = process.argv[2] ?? '';
if (!STACK_SERVICES.includes(service)) {
  console.error(`usage: node healthcheck.mjs <${STACK_SERVICES.join('|')}>`);
  process.exit(2);
}

/** The address to dial for a listener bound to `host`. */
const dialHost = (host) => (host === '0.0.0.0' || host === '' ? '127.0.0.1' : host);

/** The service's built config: beside this file in an image (/app), two levels up in the repository. */
function configModule() {
  const here = path.dirname(fileURLToPath(import.meta.url));
  for (const root of [here, path.resolve(here, '../..')]) {
    const file = path.join(root, 'services', service, 'dist', 'config.js');
    if (existsSync(file)) return pathToFileURL(file).href;
  }
  throw new Error(`services/${service}/dist/config.js not found`);
}

async function serving() {
  const { configSchema } = await import(configModule());
  const config = loadConfig(configSchema, process.env, { service });
  if (service === 'gateway') {
    const res = await fetch(`http://${dialHost(config.HOST)}:${config.PORT}/readyz`, {
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    return res.ok;
  }
  const { host, port } = config[`${service.toUpperCase()}_ADDR`];
  return checkHealth(`${dialHost(host)}:${port}`, '', TIMEOUT_MS);
}

serving().then(
  (ok) => process.exit(ok ? 0 : 1),
  (err) => {
    console.error(`healthcheck: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
