// The build secrets of the Dockerfile's npm steps, for building behind a TLS-intercepting proxy
// or against a registry mirror (docs/deploy.md, "Behind a TLS-intercepting proxy"):
//   npm_ca   a PEM CA bundle npm trusts in addition to Node's own (NODE_EXTRA_CA_CERTS)
//   npmrc    a whole .npmrc (registry, auth, cafile, proxy) for npm inside the build
// They are mounted only while npm runs (`RUN --mount=type=secret`) and never stored in an image;
// docker buildx and podman take them the same way: `--secret id=<id>,src=<file>`.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export interface BuildSecret {
  id: 'npm_ca' | 'npmrc';
  file: string;
  /** Where the file was found, for the log. */
  from: string;
}

function npmConfig(name: string): string | undefined {
  const res = spawnSync('npm', ['config', 'get', name], { encoding: 'utf8' });
  const value = res.status === 0 ? res.stdout.trim() : '';
  return value && value !== 'null' && value !== 'undefined' ? value : undefined;
}

/**
 * The secrets to hand in: NPM_CA_FILE and NPMRC_FILE when set; otherwise the CA bundle this
 * machine's npm already trusts beyond Node's own (npm's `cafile`, or NODE_EXTRA_CA_CERTS), so
 * a build reaches the registry wherever `npm ci` on this machine does.
 */
export function buildSecrets(env: NodeJS.ProcessEnv = process.env): BuildSecret[] {
  const secrets: BuildSecret[] = [];
  const candidates: [string | undefined, string][] = [
    [env.NPM_CA_FILE, 'NPM_CA_FILE'],
    [npmConfig('cafile'), "this machine's npm config cafile"],
    [env.NODE_EXTRA_CA_CERTS, 'NODE_EXTRA_CA_CERTS'],
  ];
  const ca = candidates.find(([file]) => file);
  if (ca?.[0]) {
    if (!existsSync(ca[0])) throw new Error(`${ca[1]}: ${ca[0]} does not exist`);
    secrets.push({ id: 'npm_ca', file: ca[0], from: ca[1] });
  }
  if (env.NPMRC_FILE) {
    if (!existsSync(env.NPMRC_FILE))
      throw new Error(`NPMRC_FILE: ${env.NPMRC_FILE} does not exist`);
    secrets.push({ id: 'npmrc', file: env.NPMRC_FILE, from: 'NPMRC_FILE' });
  }
  return secrets;
}

/** `--secret id=…,src=…` arguments for podman build or docker buildx build. */
export function secretArgs(secrets: readonly BuildSecret[]): string[] {
  return secrets.flatMap((s) => ['--secret', `id=${s.id},src=${s.file}`]);
}
