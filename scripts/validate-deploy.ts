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
// imports the loaders exported here (the compose ones live in scripts/deploy/compose.ts).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { loadCompose, validateComposeSchema } from './deploy/compose.js';
import { OVERLAYS_DIR, ROOT } from './deploy/paths.js';

export * from './deploy/compose.js';
export * from './deploy/paths.js';

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
