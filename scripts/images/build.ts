// `npm run images`: builds the five images with podman, one Dockerfile target each, tagged
// support-agent/<service>:<version>, then prints each image's size and what it adds to its base.
//
//   npm run images                       all five
//   npm run images -- gateway tickets    only these
//
// Environment: NODE_IMAGE (the base; a stand-in is made when it cannot be pulled, see base.ts),
// NPM_CA_FILE / NPMRC_FILE (build secrets, secrets.ts), IMAGE_SOURCE (the source label;
// default: git's origin URL), IMAGES_STATE_DIR (engine settings and work files).
import { spawnSync } from 'node:child_process';
import { ROOT } from '../deploy/paths.js';
import { resolveBase, type BaseImage } from './base.js';
import {
  ensureEnginePackages,
  imageLabels,
  imageSize,
  log,
  mb,
  podmanStreaming,
} from './engine.js';
import { buildSecrets, secretArgs } from './secrets.js';
import { SERVICES, imageName, imageVersion } from './targets.js';
import type { StackService } from '@support-agent/shared/ports';

function git(args: string[]): string {
  const res = spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  return res.status === 0 ? res.stdout.trim() : '';
}

export interface BuiltImage {
  service: StackService;
  image: string;
  bytes: number;
  /** Bytes over the base image (negative when the image is smaller than its base). */
  overBase: number;
  seconds: number;
}

export interface BuildReport {
  base: BaseImage;
  baseBytes: number;
  images: BuiltImage[];
  seconds: number;
}

/** Builds `services` (default all five) and returns what was built. */
export async function buildImages(
  services: readonly StackService[] = SERVICES,
): Promise<BuildReport> {
  const started = Date.now();
  ensureEnginePackages();
  const base = resolveBase();
  const secrets = buildSecrets();
  for (const s of secrets) log(`build secret ${s.id}: ${s.file} (from ${s.from})`);
  const version = imageVersion();
  const revision = git(['rev-parse', 'HEAD']) || 'unknown';
  const source = process.env.IMAGE_SOURCE ?? git(['config', '--get', 'remote.origin.url']);
  const baseBytes = imageSize(base.image);
  log(
    `base ${base.image}${base.standIn ? ` (stand-in for ${base.requested})` : ''}: ${mb(baseBytes)}`,
  );

  const images: BuiltImage[] = [];
  for (const service of services) {
    const image = imageName(service, version);
    const t0 = Date.now();
    log(`building ${image}`);
    const args = [
      'build',
      // The Docker image format keeps HEALTHCHECK (OCI has no field for it).
      '--format',
      'docker',
      '--layers',
      '--target',
      service,
      '--tag',
      image,
      '--build-arg',
      `NODE_IMAGE=${base.image}`,
      '--build-arg',
      `VERSION=${version}`,
      '--build-arg',
      `REVISION=${revision}`,
      '--build-arg',
      `SOURCE=${source}`,
      ...secretArgs(secrets),
      '--file',
      'Dockerfile',
      ROOT,
    ];
    const tail: string[] = [];
    const status = await podmanStreaming(args, (line) => {
      tail.push(line);
      if (tail.length > 40) tail.shift();
      if (/^STEP \d+\/\d+: (FROM|RUN)|^COMMIT|^Successfully/.test(line))
        log(`  ${line.slice(0, 140)}`);
    });
    if (status !== 0) throw new Error(`building ${image} failed (${status}):\n${tail.join('\n')}`);
    const bytes = imageSize(image);
    images.push({
      service,
      image,
      bytes,
      overBase: bytes - baseBytes,
      seconds: (Date.now() - t0) / 1000,
    });
  }
  return { base, baseBytes, images, seconds: (Date.now() - started) / 1000 };
}

export function printReport(report: BuildReport): void {
  const { base } = report;
  console.log('');
  console.log(
    `base: ${base.image}${base.standIn ? ` — STAND-IN for ${base.requested}` : ''}, ${mb(report.baseBytes)}` +
      (base.madeInSeconds ? `, made in ${base.madeInSeconds} s` : ''),
  );
  console.log('image                          size       over base  build');
  for (const i of report.images) {
    const label = imageLabels(i.image)['org.opencontainers.image.base.name'] ?? '';
    console.log(
      `${i.image.padEnd(30)} ${mb(i.bytes).padStart(9)}  ${mb(i.overBase).padStart(9)}  ${i.seconds.toFixed(0).padStart(4)} s` +
        (base.standIn ? `  (base.name ${label}: stand-in)` : ''),
    );
  }
  console.log(`built ${report.images.length} images in ${report.seconds.toFixed(0)} s`);
}

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((s) => !SERVICES.includes(s as StackService));
  if (unknown.length > 0)
    throw new Error(`unknown service ${unknown.join(', ')} (one of ${SERVICES.join(', ')})`);
  const report = await buildImages(wanted.length > 0 ? (wanted as StackService[]) : SERVICES);
  printReport(report);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err: unknown) => {
    console.error(`[images] ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
