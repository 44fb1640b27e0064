// The base image of the builds: NODE_IMAGE (the Dockerfile's default unless set) when it is
// here or can be pulled, otherwise a stand-in made on this machine:
//
//   Debian bookworm minbase (mmdebstrap, from the mirror apt uses, "slim" path excludes as the
//   Debian images have) + this machine's node binary in /usr/local/bin + npm from
//   `npm pack npm@<version>` in /usr/local/lib/node_modules + user node 1000:1000,
//   then `podman import`, tagged localhost/support-agent/node-standin:<node>-bookworm-slim.
//
// The stand-in is made once: its inputs (node binary, npm version, recipe) are hashed into a
// label, and a later run whose inputs match reuses the image.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../deploy/paths.js';
import {
  STATE_DIR,
  imageExists,
  imageLabels,
  log,
  podman,
  podmanOk,
  type RunResult,
} from './engine.js';

/** npm as node 20.20's official images ship it (STANDIN_NPM_VERSION overrides). */
const STANDIN_NPM_VERSION = process.env.STANDIN_NPM_VERSION || '10.8.2';
const STANDIN_REPO = 'localhost/support-agent/node-standin';
const KEY_LABEL = 'org.support-agent.standin.key';
/** Bump when the recipe below changes, so cached stand-ins are made again. */
const RECIPE = 1;

/** Paths the Debian container images leave out ("slim"), as dpkg path excludes. */
const SLIM_EXCLUDES = [
  'path-exclude=/usr/share/man/*',
  'path-exclude=/usr/share/info/*',
  'path-exclude=/usr/share/groff/*',
  'path-exclude=/usr/share/lintian/*',
  'path-exclude=/usr/share/linda/*',
  'path-exclude=/usr/share/locale/*',
  'path-include=/usr/share/locale/locale.alias',
  'path-exclude=/usr/share/doc/*',
  'path-include=/usr/share/doc/*/copyright',
];

export interface BaseImage {
  /** What the builds get as NODE_IMAGE. */
  image: string;
  /** True when `image` is the stand-in for `requested`. */
  standIn: boolean;
  /** The image asked for (NODE_IMAGE or the Dockerfile's default). */
  requested: string;
  /** Seconds spent making the stand-in now (0 when it was cached or not needed). */
  madeInSeconds: number;
}

/** The Dockerfile's default NODE_IMAGE (`ARG NODE_IMAGE=…` before the first FROM). */
export function dockerfileNodeImage(): string {
  const text = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  const m = /^ARG NODE_IMAGE=(\S+)$/m.exec(text);
  if (!m) throw new Error('the Dockerfile has no ARG NODE_IMAGE=… default');
  return m[1] as string;
}

/** NODE_IMAGE when it is here or can be pulled, otherwise the stand-in (made or reused). */
export function resolveBase(
  requested = process.env.NODE_IMAGE || dockerfileNodeImage(),
): BaseImage {
  if (imageExists(requested))
    return { image: requested, standIn: false, requested, madeInSeconds: 0 };
  log(`pulling ${requested}`);
  const pull: RunResult = podman(['pull', '--quiet', requested], { timeout: 300_000 });
  if (pull.status === 0) return { image: requested, standIn: false, requested, madeInSeconds: 0 };
  const reason = pull.stderr.trim().split('\n').at(-1) ?? `exit ${pull.status}`;
  log(`${requested} cannot be pulled (${reason})`);
  const started = Date.now();
  const { image, made } = standIn(requested);
  return {
    image,
    standIn: true,
    requested,
    madeInSeconds: made ? Math.round((Date.now() - started) / 1000) : 0,
  };
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function run(command: string, args: string[], cwd?: string): string {
  const res = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
  });
  if (res.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} failed (${res.status}): ${(res.stderr || res.stdout).trim().slice(-2000)}`,
    );
  }
  return res.stdout.trim();
}

/**
 * The Debian suites apt uses here (deb and deb822 sources naming bookworm, bookworm-updates
 * or bookworm-security), as one-line sources for mmdebstrap; deb.debian.org when none.
 */
function bookwormSources(): string[] {
  const files = ['/etc/apt/sources.list'];
  const dir = '/etc/apt/sources.list.d';
  if (existsSync(dir)) {
    for (const f of readdirSync(dir)) {
      if (f.endsWith('.list') || f.endsWith('.sources')) files.push(path.join(dir, f));
    }
  }
  const lines = new Set<string>();
  const wanted = /^bookworm(-updates|-security)?$/;
  for (const file of files.filter((f) => existsSync(f))) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)\s+/gm)) {
      if (wanted.test(m[2] as string)) lines.add(`deb ${m[1]} ${m[2]} main`);
    }
    for (const block of text.split(/\n\s*\n/)) {
      const field = (name: string) => new RegExp(`^${name}:\\s*(.+)$`, 'mi').exec(block)?.[1];
      if (!/\bdeb\b/.test(field('Types') ?? '') || /^Enabled:\s*no/im.test(block)) continue;
      for (const uri of (field('URIs') ?? '').split(/\s+/).filter(Boolean)) {
        for (const suite of (field('Suites') ?? '').split(/\s+/).filter((s) => wanted.test(s))) {
          lines.add(`deb ${uri} ${suite} main`);
        }
      }
    }
  }
  return lines.size > 0 ? [...lines] : ['deb http://deb.debian.org/debian bookworm main'];
}

/** The stand-in for `requested`: reused when its inputs match, else made now. */
function standIn(requested: string): { image: string; made: boolean } {
  const nodeBinary = run('sh', ['-c', 'command -v node']);
  const nodeVersion = run(nodeBinary, ['--version']).replace(/^v/, '');
  const tag = `${STANDIN_REPO}:${nodeVersion}-bookworm-slim`;
  const sources = bookwormSources();
  const key = sha256(
    JSON.stringify({
      node: sha256(readFileSync(nodeBinary)),
      npm: STANDIN_NPM_VERSION,
      sources,
      excludes: SLIM_EXCLUDES,
      recipe: RECIPE,
    }),
  );
  if (imageExists(tag) && imageLabels(tag)[KEY_LABEL] === key) {
    log(`stand-in base ${tag} (cached; stands in for ${requested})`);
    return { image: tag, made: false };
  }
  const wantedVersion = /node:(\d+\.\d+\.\d+)/.exec(requested)?.[1];
  if (wantedVersion && wantedVersion !== nodeVersion) {
    log(`note: ${requested} has node ${wantedVersion}; this machine's node is ${nodeVersion}`);
  }
  log(
    `making the stand-in base ${tag}: mmdebstrap bookworm minbase + node ${nodeVersion} + npm ${STANDIN_NPM_VERSION} (1–5 min)`,
  );
  const work = path.join(STATE_DIR, 'standin');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const npmTgz = path.join(
    work,
    run('npm', ['pack', '--silent', `npm@${STANDIN_NPM_VERSION}`], work)
      .split('\n')
      .at(-1) as string,
  );
  const sourcesFile = path.join(work, 'sources.list');
  spawnSync('sh', ['-c', `cat > ${sourcesFile}`], { input: sources.join('\n') + '\n' });
  const rootfs = path.join(work, 'rootfs.tar');
  // Customize hooks run on this machine with "$1" = the new root file system.
  const hooks = [
    `mkdir -p "$1/usr/local/bin" "$1/usr/local/lib/node_modules/npm"`,
    `cp ${nodeBinary} "$1/usr/local/bin/node"`,
    `tar -xzf ${npmTgz} -C "$1/usr/local/lib/node_modules/npm" --strip-components=1 --no-same-owner`,
    `ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm"`,
    `ln -s ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/local/bin/npx"`,
    `chroot "$1" groupadd --gid 1000 node`,
    `chroot "$1" useradd --uid 1000 --gid node --shell /bin/bash --create-home node`,
  ];
  run('mmdebstrap', [
    '--variant=minbase',
    '--quiet',
    '--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr',
    ...SLIM_EXCLUDES.map((o) => `--dpkgopt=${o}`),
    ...hooks.map((h) => `--customize-hook=${h}`),
    'bookworm',
    rootfs,
    sourcesFile,
  ]);
  podmanOk([
    'import',
    '--quiet',
    '--change',
    'CMD ["node"]',
    '--change',
    `ENV NODE_VERSION=${nodeVersion}`,
    '--change',
    'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    '--change',
    `LABEL ${KEY_LABEL}=${key}`,
    '--change',
    `LABEL org.opencontainers.image.title="stand-in for ${requested}"`,
    '--change',
    `LABEL org.opencontainers.image.description="Stand-in for ${requested}, made here: Debian bookworm minbase (mmdebstrap) + node ${nodeVersion} + npm ${STANDIN_NPM_VERSION} + user node 1000:1000"`,
    rootfs,
    tag,
  ]);
  rmSync(work, { recursive: true, force: true });
  log(`stand-in base ${tag} made (stands in for ${requested})`);
  return { image: tag, made: true };
}
