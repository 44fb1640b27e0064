// A small reader of the repository's one Dockerfile for the deploy tests: instructions with
// their continuation lines joined, grouped into stages, and each service's target seen as the
// image it builds (its own instructions after those of the stages it is FROM).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../scripts/validate-deploy.js';

export const DOCKERFILE = path.join(ROOT, 'Dockerfile');

export interface Instruction {
  keyword: string;
  args: string;
}

export interface Stage {
  from: string;
  name: string | undefined;
  instructions: Instruction[];
}

export interface ImageTarget {
  /** The target stage itself. */
  stage: Stage;
  /** The target and the stages it builds on, base first. */
  chain: Stage[];
  user: string | undefined;
  workdir: string | undefined;
  /** CMD / ENTRYPOINT / HEALTHCHECK CMD in exec form (JSON arrays). */
  cmd: string[];
  entrypoint: string[] | undefined;
  healthcheck: string[];
  expose: number[];
  env: Record<string, string>;
  labels: Record<string, string>;
  /** `COPY --from=…` arguments, e.g. "--from=build /app/services/x/dist ./services/x/dist". */
  stageCopies: string[];
  /** `COPY` arguments without --from, e.g. "deploy/bootstrap/bootstrap.mjs /app/…". */
  copies: string[];
}

export interface ParsedDockerfile {
  /** ARG instructions before the first FROM, with their defaults. */
  globalArgs: Record<string, string | undefined>;
  stages: Stage[];
}

/** The Dockerfile as seen for one service: its stages and its target. */
export interface ServiceDockerfile extends ParsedDockerfile {
  runtime: ImageTarget;
}

export function instructions(text: string): Instruction[] {
  const joined = text.replace(/\\\r?\n/g, ' ');
  return joined
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const m = /^(\S+)\s*(.*)$/.exec(l)!;
      return {
        keyword: (m[1] as string).toUpperCase(),
        args: (m[2] as string).replace(/\s+/g, ' '),
      };
    });
}

function keyValues(args: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of args.matchAll(/([A-Za-z0-9_.-]+)=("(?:[^"\\]|\\.)*"|\S+)/g)) {
    const raw = m[2] as string;
    out[m[1] as string] = raw.startsWith('"') ? (JSON.parse(raw) as string) : raw;
  }
  return out;
}

function execForm(args: string, what: string): string[] {
  try {
    const value: unknown = JSON.parse(args);
    if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value;
  } catch {
    // fall through
  }
  throw new Error(`${what} is not in exec form: ${args}`);
}

export function parseDockerfile(text: string): ParsedDockerfile {
  const globalArgs: Record<string, string | undefined> = {};
  const stages: Stage[] = [];
  for (const ins of instructions(text)) {
    if (ins.keyword === 'FROM') {
      const m = /^(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args)!;
      stages.push({ from: m[1] as string, name: m[2], instructions: [] });
    } else if (stages.length === 0) {
      if (ins.keyword === 'ARG') {
        const [name, value] = ins.args.split('=', 2);
        globalArgs[name as string] = value;
      }
    } else stages.at(-1)!.instructions.push(ins);
  }
  return { globalArgs, stages };
}

/** The image a target builds: its instructions after those of the stages it is FROM. */
export function imageTarget(df: ParsedDockerfile, name: string): ImageTarget {
  const chain: Stage[] = [];
  for (let s = df.stages.find((x) => x.name === name); s;) {
    chain.unshift(s);
    const parent = s.from;
    s = df.stages.find((x) => x.name === parent);
  }
  const stage = chain.at(-1);
  if (!stage) throw new Error(`the Dockerfile has no target ${name}`);
  const all = chain.flatMap((s) => s.instructions);
  const of = (keyword: string) => all.filter((i) => i.keyword === keyword);
  const last = (keyword: string) => of(keyword).at(-1);
  const health = last('HEALTHCHECK')?.args ?? '';
  const healthCmd = /\bCMD\s+(\[.*\])$/.exec(health)?.[1];
  const entrypoint = last('ENTRYPOINT');
  const copies = of('COPY');
  return {
    stage,
    chain,
    user: last('USER')?.args,
    workdir: last('WORKDIR')?.args,
    cmd: execForm(last('CMD')?.args ?? '', 'CMD'),
    entrypoint: entrypoint ? execForm(entrypoint.args, 'ENTRYPOINT') : undefined,
    healthcheck: healthCmd ? execForm(healthCmd, 'HEALTHCHECK CMD') : [],
    expose: of('EXPOSE').flatMap((i) => i.args.split(' ').map((p) => Number(p.split('/')[0]))),
    env: Object.assign({}, ...of('ENV').map((i) => keyValues(i.args))),
    labels: Object.assign({}, ...of('LABEL').map((i) => keyValues(i.args))),
    stageCopies: copies.filter((i) => i.args.startsWith('--from=')).map((i) => i.args),
    copies: copies.filter((i) => !i.args.startsWith('--from')).map((i) => i.args),
  };
}

/** The repository's Dockerfile, parsed. */
export function readDockerfile(): ParsedDockerfile {
  return parseDockerfile(readFileSync(DOCKERFILE, 'utf8'));
}

/** The Dockerfile with the target of one service (`docker build --target <service>`). */
export function dockerfile(service: string): ServiceDockerfile {
  const df = readDockerfile();
  return { ...df, runtime: imageTarget(df, service) };
}
