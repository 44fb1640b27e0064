// docker-compose.yml as docker compose sees it: .env parsed and interpolated (`${VAR}`, `:-`,
// `:?` and the rest), YAML merge keys applied, then checked against the Compose Specification
// schema (test/fixtures/compose-spec, see its PROVENANCE.md) with Ajv. Used by
// scripts/validate-deploy.ts and test/deploy.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parse } from 'yaml';
import { COMPOSE_FILE, COMPOSE_SCHEMA_FILE, DOTENV_FILE, ROOT } from './paths.js';

export type DotEnv = Record<string, string>;

/**
 * A .env file as docker compose reads it: KEY=VALUE lines, `#` comments, optional `export`,
 * single quotes literal, double quotes with \n \t \\ \" escapes, unquoted values trimmed and
 * cut at " #". (Compose would also expand ${…} inside values; this project's .env has none.)
 */
export function parseDotEnv(text: string): DotEnv {
  const env: DotEnv = {};
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)$/.exec(line);
    if (!m) throw new Error(`.env line ${index + 1}: expected KEY=VALUE, got "${raw}"`);
    const key = m[1] as string;
    const rest = m[2] as string;
    let value: string;
    if (rest.startsWith("'")) {
      const end = rest.indexOf("'", 1);
      if (end < 0) throw new Error(`.env line ${index + 1}: unterminated single quote`);
      value = rest.slice(1, end);
    } else if (rest.startsWith('"')) {
      const m2 = /^"((?:[^"\\]|\\.)*)"/.exec(rest);
      if (!m2) throw new Error(`.env line ${index + 1}: unterminated double quote`);
      value = (m2[1] as string).replace(/\\(.)/g, (_, c: string) =>
        c === 'n' ? '\n' : c === 't' ? '\t' : c,
      );
    } else {
      value = rest.replace(/\s+#.*$/, '').trim();
    }
    env[key] = value;
  });
  return env;
}

/**
 * Compose interpolation of one string: $$ → $, $VAR, ${VAR}, ${VAR:-default}, ${VAR-default},
 * ${VAR:?error}, ${VAR?error}, ${VAR:+alt}, ${VAR+alt}, nested in defaults. A plain reference
 * to an unset variable is reported too: every value must come from .env.
 */
export function interpolate(input: string, env: DotEnv, where: string, problems: string[]): string {
  let out = '';
  let i = 0;
  while (i < input.length) {
    const c = input[i] as string;
    if (c !== '$') {
      out += c;
      i++;
      continue;
    }
    const next = input[i + 1];
    if (next === '$') {
      out += '$';
      i += 2;
    } else if (next === '{') {
      let depth = 1;
      let j = i + 2;
      for (; j < input.length && depth > 0; j++) {
        if (input[j] === '{') depth++;
        else if (input[j] === '}') depth--;
      }
      if (depth > 0) {
        problems.push(`${where}: unterminated \${ in "${input}"`);
        return out + input.slice(i);
      }
      out += substitute(input.slice(i + 2, j - 1), env, where, problems);
      i = j;
    } else {
      const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(input.slice(i + 1))?.[0];
      if (name === undefined) {
        out += '$';
        i++;
      } else {
        out += substitute(name, env, where, problems);
        i += 1 + name.length;
      }
    }
  }
  return out;
}

function substitute(expr: string, env: DotEnv, where: string, problems: string[]): string {
  const m = /^([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([\s\S]*))?$/.exec(expr);
  if (!m) {
    problems.push(`${where}: invalid interpolation \${${expr}}`);
    return '';
  }
  const name = m[1] as string;
  const op = m[2];
  const arg = m[3] ?? '';
  const value = env[name];
  const isSet = value !== undefined;
  const nonEmpty = isSet && value !== '';
  const nested = () => interpolate(arg, env, where, problems);
  switch (op) {
    case undefined:
      if (!isSet) problems.push(`${where}: \${${name}} is not set in .env`);
      return value ?? '';
    case ':-':
      return nonEmpty ? value : nested();
    case '-':
      return isSet ? value : nested();
    case ':?':
    case '?':
      if (op === ':?' ? !nonEmpty : !isSet) {
        problems.push(`${where}: ${name} is required${arg ? `: ${arg}` : ''} (set it in .env)`);
      }
      return value ?? '';
    case ':+':
      return nonEmpty ? nested() : '';
    default:
      return isSet ? nested() : '';
  }
}

/** Interpolates every string value (not keys) of a parsed compose file. */
export function interpolateModel(
  node: unknown,
  env: DotEnv,
  problems: string[],
  where = '',
): unknown {
  if (typeof node === 'string') return interpolate(node, env, where || '/', problems);
  if (Array.isArray(node))
    return node.map((v, i) => interpolateModel(v, env, problems, `${where}/${i}`));
  if (node && typeof node === 'object') {
    return Object.fromEntries(
      Object.entries(node).map(([k, v]) => [
        k,
        interpolateModel(v, env, problems, `${where}/${k}`),
      ]),
    );
  }
  return node;
}

export interface ComposeProject {
  /** docker-compose.yml after YAML merge keys and interpolation. */
  model: Record<string, unknown>;
  env: DotEnv;
  /** Interpolation problems (unset variables, `:?` failures). */
  problems: string[];
}

/** docker-compose.yml interpolated with .env, as `docker compose config` would see it. */
export function loadCompose(): ComposeProject {
  const env = parseDotEnv(readFileSync(DOTENV_FILE, 'utf8'));
  const raw: unknown = parse(readFileSync(COMPOSE_FILE, 'utf8'), { merge: true });
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new Error('docker-compose.yml is not a mapping');
  }
  const problems: string[] = [];
  const model = interpolateModel(raw, env, problems) as Record<string, unknown>;
  return { model, env, problems };
}

interface AjvError {
  instancePath: string;
  message?: string;
  params?: Record<string, unknown>;
}
interface AjvValidateFunction {
  (data: unknown): boolean;
  errors?: AjvError[] | null;
}
interface AjvInstance {
  addFormat(name: string, format: RegExp): AjvInstance;
  compile(schema: object): AjvValidateFunction;
}
type AjvClass = new (options: Record<string, unknown>) => AjvInstance;

/**
 * Ajv 8's draft 2019-09 class (the schema declares draft 2019-09). The root `ajv` is ESLint's
 * Ajv 6, so Ajv 8 is taken from where it is installed: the root if it is 8, else the Ajv 8 that
 * ajv-formats depends on, else the knowledge workspace's devDependency.
 */
function loadAjv2019(): AjvClass {
  const fromRoot = createRequire(path.join(ROOT, 'package.json'));
  const bases = [path.join(ROOT, 'package.json')];
  for (const pkg of ['ajv-formats/package.json']) {
    try {
      bases.push(fromRoot.resolve(pkg));
    } catch {
      // not installed: try the next place
    }
  }
  bases.push(path.join(ROOT, 'services/knowledge/package.json'));
  for (const base of bases) {
    const requireFrom = createRequire(base);
    try {
      const version = (requireFrom('ajv/package.json') as { version: string }).version;
      if (Number(version.split('.')[0]) >= 8) {
        return (requireFrom('ajv/dist/2019') as { default: AjvClass }).default;
      }
    } catch {
      // no ajv there
    }
  }
  throw new Error('Ajv 8 not found: add "ajv": "^8" to the root devDependencies');
}

/** Keys whose values map names to subschemas (so a key named "id" there is a name). */
const SCHEMA_MAPS = new Set([
  'properties',
  'patternProperties',
  'definitions',
  '$defs',
  'dependentSchemas',
]);

/**
 * The legacy draft-04 `id` annotations of the compose schema removed: in draft 2019-09 `id` is
 * not a keyword (an ignored annotation), but Ajv 8 refuses schemas that contain it.
 */
function withoutLegacyIds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutLegacyIds);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'id' && typeof value === 'string') continue;
    out[key] =
      SCHEMA_MAPS.has(key) && value && typeof value === 'object' && !Array.isArray(value)
        ? Object.fromEntries(Object.entries(value).map(([n, s]) => [n, withoutLegacyIds(s)]))
        : withoutLegacyIds(value);
  }
  return out;
}

let composeValidator: AjvValidateFunction | undefined;

/** Problems of a compose model against the Compose Specification schema. */
export function validateComposeSchema(model: unknown): string[] {
  if (!composeValidator) {
    const schema = JSON.parse(readFileSync(COMPOSE_SCHEMA_FILE, 'utf8')) as object;
    const Ajv2019 = loadAjv2019();
    // strictTypes off: the upstream schema has type-less subschemas Ajv would reject.
    const ajv = new Ajv2019({ allErrors: true, strict: true, strictTypes: false });
    // compose-go's custom format: a port or range, optionally with a protocol.
    ajv.addFormat('expose', /^\d+(?:-\d+)?(?:\/[a-z]+)?$/);
    composeValidator = ajv.compile(withoutLegacyIds(schema) as object);
  }
  if (composeValidator(model)) return [];
  return (composeValidator.errors ?? []).map(
    (e) =>
      `${e.instancePath || '/'} ${e.message ?? 'is invalid'}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`,
  );
}
