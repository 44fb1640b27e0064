// `npm run validate:deploy`: offline validation of the deployment files, run by CI. No cluster
// and no Docker engine are needed; kubectl is (its built-in kustomize renders the overlays).
//
//   1. renders every overlay in deploy/k8s/overlays with `kubectl kustomize`,
//   2. validates every rendered object against the Kubernetes OpenAPI schema with
//      kubernetes-models (model class picked by apiVersion/kind; an unknown kind fails),
//   3. validates docker-compose.yml, interpolated with .env as docker compose does, against the
//      Compose Specification schema (test/fixtures/compose-spec, see its PROVENANCE.md),
//
// then prints a summary and exits 1 if anything failed. kubernetes-models does not reject
// unknown fields; test/deploy/*.test.ts checks the policies on the same rendered objects and
// imports the loaders exported here.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const OVERLAYS_DIR = path.join(ROOT, 'deploy/k8s/overlays');
export const COMPOSE_FILE = path.join(ROOT, 'docker-compose.yml');
export const DOTENV_FILE = path.join(ROOT, '.env');
export const COMPOSE_SCHEMA_FILE = path.join(ROOT, 'test/fixtures/compose-spec/compose-spec.json');

/** A rendered Kubernetes object; the policy tests narrow it with kubernetes-models' types. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

export interface RenderedOverlay {
  name: string;
  /** Relative to the repository root. */
  dir: string;
  objects: K8sObject[];
}

// ---------------------------------------------------------------------------------------------
// Kubernetes

/** The overlay directories (those with a kustomization.yaml), sorted by name. */
export function overlayDirs(): string[] {
  return readdirSync(OVERLAYS_DIR, { withFileTypes: true })
    .filter(
      (e) => e.isDirectory() && existsSync(path.join(OVERLAYS_DIR, e.name, 'kustomization.yaml')),
    )
    .map((e) => path.join(OVERLAYS_DIR, e.name))
    .sort();
}

/** `kubectl kustomize dir`, parsed. Throws with kubectl's message when rendering fails. */
export function renderKustomization(dir: string): K8sObject[] {
  let output: string;
  try {
    output = execFileSync('kubectl', ['kustomize', dir], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') {
      throw new Error(
        'kubectl not found on PATH: it renders the kustomize overlays (CI machines have it, ' +
          'see /work/shared/TOOLCHAIN.md; elsewhere install kubectl ≥ 1.27)',
      );
    }
    throw new Error(
      `kubectl kustomize ${path.relative(ROOT, dir)} failed: ${e.stderr ?? e.message}`,
    );
  }
  const objects: K8sObject[] = [];
  for (const doc of parseAllDocuments(output)) {
    if (doc.errors.length > 0) throw new Error(`unparsable kustomize output: ${doc.errors[0]}`);
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    if (!isK8sObject(value)) {
      throw new Error(
        `rendered document without apiVersion/kind/metadata.name: ${JSON.stringify(value).slice(0, 200)}`,
      );
    }
    objects.push(value);
  }
  return objects;
}

function isK8sObject(value: unknown): value is K8sObject {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Partial<K8sObject>;
  return (
    typeof v.apiVersion === 'string' &&
    typeof v.kind === 'string' &&
    typeof v.metadata === 'object' &&
    v.metadata !== null &&
    typeof v.metadata.name === 'string'
  );
}

/** Every overlay, rendered. */
export function renderOverlays(): RenderedOverlay[] {
  return overlayDirs().map((dir) => ({
    name: path.basename(dir),
    dir: path.relative(ROOT, dir),
    objects: renderKustomization(dir),
  }));
}

interface ModelClass {
  new (data: unknown): { validate(): void };
  apiVersion: string;
  kind: string;
}

const modelModules = new Map<string, Promise<Record<string, unknown> | undefined>>();

/** The kubernetes-models class of apiVersion/kind, or undefined when it has none. */
export async function modelClassFor(
  apiVersion: string,
  kind: string,
): Promise<ModelClass | undefined> {
  // "v1", "apps/v1", "networking.k8s.io/v1", "autoscaling/v2beta2" … and nothing else.
  if (!/^(?:[a-z0-9.-]+\/)?v\d+(?:(?:alpha|beta)\d+)?$/.test(apiVersion)) return undefined;
  let mod = modelModules.get(apiVersion);
  if (!mod) {
    mod = import(`kubernetes-models/${apiVersion}`).then(
      (m: Record<string, unknown>) => m,
      () => undefined,
    );
    modelModules.set(apiVersion, mod);
  }
  const candidate: unknown = (await mod)?.[kind];
  if (typeof candidate !== 'function') return undefined;
  const model = candidate as Partial<ModelClass>;
  return model.apiVersion === apiVersion && model.kind === kind ? (model as ModelClass) : undefined;
}

/**
 * Schema problems of one object (none: valid). Unknown kinds are problems too, and so are
 * alpha/beta API versions: kubernetes-models still has removed ones (extensions/v1beta1,
 * policy/v1beta1, autoscaling/v2beta2 …) that current clusters reject, and every kind this
 * project uses is GA.
 */
export async function validateK8sObject(obj: K8sObject): Promise<string[]> {
  if (/\/v\d+(?:alpha|beta)\d+$|^v\d+(?:alpha|beta)\d+$/.test(obj.apiVersion)) {
    return [`${obj.apiVersion} is not a GA API version (use the stable ${obj.kind} API)`];
  }
  const Model = await modelClassFor(obj.apiVersion, obj.kind);
  if (!Model) return [`unknown kind ${obj.apiVersion}/${obj.kind} (no kubernetes-models class)`];
  try {
    new Model(withUnwrappedBase64(obj)).validate();
    return [];
  } catch (err) {
    const errors = (err as { errors?: Array<{ instancePath?: string; message?: string }> }).errors;
    if (!Array.isArray(errors)) return [(err as Error).message];
    return errors.map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);
  }
}

/**
 * kustomize wraps long base64 values of Secret `data` (and ConfigMap `binaryData`) at 70
 * characters; the API server decodes them with Go's encoding/base64, which ignores \r and \n
 * (https://pkg.go.dev/encoding/base64#Encoding.Decode), but kubernetes-models' "byte" format
 * does not. Validate what the server sees.
 */
function withUnwrappedBase64(obj: K8sObject): K8sObject {
  const field =
    obj.kind === 'Secret' ? 'data' : obj.kind === 'ConfigMap' ? 'binaryData' : undefined;
  const values = field ? obj[field] : undefined;
  if (!field || !values || typeof values !== 'object') return obj;
  const unwrapped = Object.fromEntries(
    Object.entries(values).map(([k, v]) => [
      k,
      typeof v === 'string' ? v.replace(/[\r\n]/g, '') : v,
    ]),
  );
  return { ...obj, [field]: unwrapped };
}

/** "Deployment/gateway" (with the namespace when it has one). */
export function describeObject(obj: K8sObject): string {
  const ns = obj.metadata.namespace ? `${obj.metadata.namespace}/` : '';
  return `${obj.kind}/${ns}${obj.metadata.name}`;
}

// ---------------------------------------------------------------------------------------------
// Compose

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

// ---------------------------------------------------------------------------------------------
// Main

async function main(): Promise<number> {
  let failed = 0;
  let passed = 0;
  const fail = (what: string, problems: string[]) => {
    failed++;
    console.log(`  ✗ ${what}`);
    for (const p of problems.slice(0, 20)) console.log(`      ${p}`);
    if (problems.length > 20) console.log(`      … ${problems.length - 20} more`);
  };

  console.log('Kubernetes (kubectl kustomize + kubernetes-models)');
  const dirs = overlayDirs();
  if (dirs.length === 0) fail('deploy/k8s/overlays', ['no overlay found']);
  for (const dir of dirs) {
    const rel = path.relative(ROOT, dir);
    let objects: K8sObject[];
    try {
      objects = renderKustomization(dir);
    } catch (err) {
      fail(`${rel}: render`, [(err as Error).message]);
      continue;
    }
    passed++;
    const kinds = new Map<string, number>();
    for (const o of objects) kinds.set(o.kind, (kinds.get(o.kind) ?? 0) + 1);
    const summary = [...kinds].sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${k} ${n}`);
    console.log(`  ✓ ${rel}: rendered ${objects.length} objects (${summary.join(', ')})`);
    let valid = 0;
    for (const obj of objects) {
      const problems = await validateK8sObject(obj);
      if (problems.length === 0) {
        valid++;
        passed++;
      } else fail(`${rel}: ${describeObject(obj)}`, problems);
    }
    console.log(
      `  ${valid === objects.length ? '✓' : '✗'} ${rel}: ${valid}/${objects.length} objects valid`,
    );
  }

  console.log('Compose (.env interpolation + Compose Specification schema)');
  try {
    const { model, env, problems } = loadCompose();
    if (problems.length > 0) fail('docker-compose.yml: interpolation with .env', problems);
    else passed++;
    const schemaProblems = validateComposeSchema(model);
    const services = Object.keys((model.services as Record<string, unknown>) ?? {});
    if (schemaProblems.length > 0) fail('docker-compose.yml: schema', schemaProblems);
    else {
      passed++;
      console.log(
        `  ✓ docker-compose.yml: ${services.length} services valid against the Compose Specification ` +
          `(.env: ${Object.keys(env).length} variables)`,
      );
    }
  } catch (err) {
    fail('docker-compose.yml', [(err as Error).message]);
  }

  console.log(`\n${passed} checks passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
