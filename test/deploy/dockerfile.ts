// A small reader of services/<name>/Dockerfile for the deploy tests: instructions with their
// continuation lines joined, grouped into stages.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../scripts/validate-deploy.js';

export interface Instruction {
  keyword: string;
  args: string;
}

export interface Stage {
  from: string;
  name: string | undefined;
  instructions: Instruction[];
}

export interface ParsedDockerfile {
  /** ARG instructions before the first FROM, with their defaults. */
  globalArgs: Record<string, string | undefined>;
  stages: Stage[];
  runtime: {
    stage: Stage;
    user: string | undefined;
    /** CMD / ENTRYPOINT / HEALTHCHECK CMD in exec form (JSON arrays). */
    cmd: string[];
    entrypoint: string[] | undefined;
    healthcheck: string[];
    expose: number[];
    env: Record<string, string>;
    labels: Record<string, string>;
    /** `COPY` arguments without --from, e.g. "deploy/bootstrap/bootstrap.mjs /app/…". */
    copies: string[];
  };
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
  const stage = stages.at(-1)!;
  const last = (keyword: string) => stage.instructions.filter((i) => i.keyword === keyword).at(-1);
  const health = last('HEALTHCHECK')?.args ?? '';
  const healthCmd = /\bCMD\s+(\[.*\])$/.exec(health)?.[1];
  const entrypoint = last('ENTRYPOINT');
  return {
    globalArgs,
    stages,
    runtime: {
      stage,
      user: last('USER')?.args,
      cmd: execForm(last('CMD')?.args ?? '', 'CMD'),
      entrypoint: entrypoint ? execForm(entrypoint.args, 'ENTRYPOINT') : undefined,
      healthcheck: healthCmd ? execForm(healthCmd, 'HEALTHCHECK CMD') : [],
      expose: stage.instructions
        .filter((i) => i.keyword === 'EXPOSE')
        .flatMap((i) => i.args.split(' ').map((p) => Number(p.split('/')[0]))),
      env: Object.assign(
        {},
        ...stage.instructions.filter((i) => i.keyword === 'ENV').map((i) => keyValues(i.args)),
      ),
      labels: Object.assign(
        {},
        ...stage.instructions.filter((i) => i.keyword === 'LABEL').map((i) => keyValues(i.args)),
      ),
      copies: stage.instructions
        .filter((i) => i.keyword === 'COPY' && !i.args.startsWith('--from'))
        .map((i) => i.args),
    },
  };
}

/** services/<name>/Dockerfile, parsed. */
export function dockerfile(service: string): ParsedDockerfile {
  return parseDockerfile(readFileSync(path.join(ROOT, 'services', service, 'Dockerfile'), 'utf8'));
}
