// Checks real HTTP responses against the gateway's OpenAPI 3.1 document: the status must be
// documented for the operation (or, for requests matching no operation, in `x-route-errors`),
// every header of the documented-header set (every response header name the document uses:
// X-Request-Id, RateLimit-Policy, RateLimit, Retry-After, WWW-Authenticate, Allow) must be
// documented for that response when present and present when documented as required, its value
// must match its schema, and the JSON body must validate (Ajv, JSON Schema 2020-12) against the
// response schema — `additionalProperties: false` makes any undocumented field an error.
// It also records which documented (operation, status, error code) combinations were seen, so a
// suite can assert that it exercised every one of them.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

export const OPENAPI_FILE = resolve(
  new URL('../..', import.meta.url).pathname,
  'services/gateway/openapi/openapi.json',
);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

// Ajv 8 with JSON Schema 2020-12, the dialect of OpenAPI 3.1.
// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as (ajv: Ajv2020) => Ajv2020;

const DOC_ID = 'urn:support-agent:openapi';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

export interface CheckedResponse {
  status: number;
  headers: Headers;
  /** The raw body ('' when empty). */
  text: string;
}

interface Matched {
  /** operationId, or `x-route-errors.<name>` for requests that match no operation. */
  key: string;
  operation?: JsonObject;
  responses: JsonObject;
}

/**
 * Error codes an error response's schema allows: the `error.code` const/enum that narrows the
 * generic Error body (in the schema itself, or in a part of its `allOf`). [] for other bodies.
 */
function codesOf(schema: Json | undefined, doc: OpenApiContract): string[] {
  const s = doc.resolve(schema);
  if (!isObject(s)) return [];
  for (const part of [s, ...(Array.isArray(s.allOf) ? s.allOf : [])]) {
    const error = (doc.resolve(part) as { properties?: { error?: JsonObject } }).properties?.error;
    const code = (error?.properties as { code?: JsonObject } | undefined)?.code;
    if (typeof code?.const === 'string') return [code.const];
    if (Array.isArray(code?.enum)) return code.enum as string[];
  }
  return [];
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export class OpenApiContract {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly routes: { regex: RegExp; item: JsonObject }[];
  /** Lower-case names of every header any response documents. */
  readonly documentedHeaders: Set<string>;
  /** `${key} ${status} ${code}` of every response seen by check(). */
  readonly seen = new Set<string>();

  constructor(readonly doc: JsonObject) {
    this.ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
    addFormats(this.ajv);
    // The document's components live in one schema resource; `#/components/…` refs resolve in it.
    this.ajv.addKeyword('components');
    this.ajv.addSchema({ $id: DOC_ID, components: this.doc.components as JsonObject });
    this.routes = Object.entries(doc.paths as JsonObject).map(([template, item]) => ({
      regex: new RegExp(
        `^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`,
      ),
      item: this.resolve(item) as JsonObject,
    }));
    this.documentedHeaders = new Set();
    for (const response of this.allResponses()) {
      for (const name of Object.keys((response.headers as JsonObject | undefined) ?? {})) {
        this.documentedHeaders.add(name.toLowerCase());
      }
    }
  }

  static fromFile(path = OPENAPI_FILE): OpenApiContract {
    return new OpenApiContract(JSON.parse(readFileSync(path, 'utf8')) as JsonObject);
  }

  /** Follows local `$ref`s. */
  resolve(value: Json | undefined): Json | undefined {
    let v = value;
    for (let i = 0; isObject(v) && typeof v.$ref === 'string'; i++) {
      if (i > 20) throw new Error(`$ref loop at ${String(v.$ref)}`);
      let target: Json | undefined = this.doc;
      for (const raw of v.$ref.slice(2).split('/')) {
        const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
        target = isObject(target) ? target[key] : undefined;
      }
      if (target === undefined) throw new Error(`unresolvable $ref ${String(v.$ref)}`);
      v = target;
    }
    return v;
  }

  /** Every response object of the document (operations and x-route-errors), resolved. */
  private allResponses(): JsonObject[] {
    const out: JsonObject[] = [];
    for (const route of this.routes) {
      for (const method of METHODS) {
        const op = route.item[method];
        if (!isObject(op)) continue;
        for (const r of Object.values(op.responses as JsonObject)) {
          out.push(this.resolve(r) as JsonObject);
        }
      }
    }
    for (const r of Object.values(this.routeErrors())) out.push(r);
    return out;
  }

  private routeErrors(): Record<string, JsonObject> {
    const raw = this.doc['x-route-errors'] as JsonObject;
    return Object.fromEntries(
      Object.entries(raw)
        .filter(([, v]) => isObject(v))
        .map(([k, v]) => [k, this.resolve(v) as JsonObject]),
    );
  }

  match(method: string, pathname: string): Matched {
    const route = this.routes.find((r) => r.regex.test(pathname));
    if (!route) {
      return {
        key: 'x-route-errors.unknownPath',
        responses: { 404: this.routeErrors().unknownPath! },
      };
    }
    const op = route.item[method.toLowerCase()] ?? (method === 'HEAD' ? route.item.get : undefined);
    if (!isObject(op)) {
      return {
        key: 'x-route-errors.methodNotAllowed',
        responses: { 405: this.routeErrors().methodNotAllowed! },
      };
    }
    return { key: String(op.operationId), operation: op, responses: op.responses as JsonObject };
  }

  private validator(schema: Json): ValidateFunction {
    const key = JSON.stringify(schema);
    let fn = this.compiled.get(key);
    if (!fn) {
      // Point the document's local refs at the registered components resource.
      const rebased = JSON.parse(key.replace(/"#\/components\//g, `"${DOC_ID}#/components/`));
      fn = this.ajv.compile(typeof rebased === 'object' ? rebased : {});
      this.compiled.set(key, fn);
    }
    return fn;
  }

  private validate(schema: Json, value: unknown, where: string): string[] {
    const fn = this.validator(schema);
    if (fn(value)) return [];
    return (fn.errors ?? []).map(
      (e) => `${where}${e.instancePath} ${e.message ?? 'invalid'} ${JSON.stringify(e.params)}`,
    );
  }

  /** Every way the response deviates from the document (empty when it conforms). */
  check(method: string, url: string | URL, res: CheckedResponse): string[] {
    const { pathname } = new URL(url);
    const matched = this.match(method, pathname);
    const where = `${method} ${pathname} → ${res.status}`;
    const status = String(res.status);
    const documented =
      matched.responses[status] ?? matched.responses[`${status[0]}XX`] ?? matched.responses.default;
    if (documented === undefined) {
      return [`${where}: status ${status} is not documented for ${matched.key}`];
    }
    const response = this.resolve(documented) as JsonObject;
    const errors: string[] = [];

    // Headers of the documented-header set.
    const headers = Object.fromEntries(
      Object.entries((response.headers as JsonObject | undefined) ?? {}).map(([k, v]) => [
        k.toLowerCase(),
        this.resolve(v) as JsonObject,
      ]),
    );
    for (const name of this.documentedHeaders) {
      const value = res.headers.get(name);
      const header = headers[name];
      if (!header) {
        if (value !== null) errors.push(`${where}: header ${name} is not documented here`);
        continue;
      }
      if (value === null) {
        if (header.required === true) errors.push(`${where}: required header ${name} missing`);
        continue;
      }
      const schema = this.resolve(header.schema) as JsonObject;
      const typed = schema.type === 'integer' && /^[0-9]+$/.test(value) ? Number(value) : value;
      errors.push(...this.validate(schema, typed, `${where}: header ${name}`));
    }
    const scope = matched.operation?.['x-required-scope'];
    if (res.status === 403 && typeof scope === 'string') {
      const challenge = res.headers.get('www-authenticate') ?? '';
      if (!challenge.includes(`scope="${scope}"`)) {
        errors.push(`${where}: the 403 challenge does not name ${scope}: ${challenge}`);
      }
    }

    // Body.
    let code = '';
    const content = response.content as JsonObject | undefined;
    if (!content) {
      if (res.text !== '') errors.push(`${where}: a body is not documented`);
    } else if (method !== 'HEAD') {
      const mediaType = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
      const media = content[mediaType] as JsonObject | undefined;
      if (!media) {
        errors.push(`${where}: content type ${mediaType || '(none)'} is not documented`);
      } else {
        let body: unknown;
        try {
          body = JSON.parse(res.text);
        } catch {
          errors.push(`${where}: body is not JSON: ${res.text.slice(0, 200)}`);
        }
        if (body !== undefined) {
          errors.push(...this.validate(media.schema ?? {}, body, `${where}: body`));
          const c = (body as { error?: { code?: unknown } }).error?.code;
          if (typeof c === 'string') code = c;
        }
      }
    }
    this.seen.add(`${matched.key} ${status} ${code}`.trim());
    return errors;
  }

  /**
   * Every documented (operation, status, error code) as `${key} ${status} ${code}`: one entry
   * per error code a response allows, one per success status.
   */
  documentedOutcomes(): string[] {
    const out: string[] = [];
    const add = (key: string, responses: JsonObject) => {
      for (const [status, r] of Object.entries(responses)) {
        const response = this.resolve(r) as JsonObject;
        const media = (response.content as JsonObject | undefined)?.['application/json'];
        const codes = isObject(media) ? codesOf(media.schema, this) : [];
        if (codes.length === 0) out.push(`${key} ${status}`);
        else for (const code of codes) out.push(`${key} ${status} ${code}`);
      }
    };
    const seenOps = new Set<string>();
    for (const route of this.routes) {
      for (const method of METHODS) {
        const op = route.item[method];
        if (!isObject(op) || seenOps.has(String(op.operationId))) continue;
        seenOps.add(String(op.operationId));
        add(String(op.operationId), op.responses as JsonObject);
      }
    }
    const routeErrors = this.routeErrors();
    add('x-route-errors.unknownPath', { 404: routeErrors.unknownPath! });
    add('x-route-errors.methodNotAllowed', { 405: routeErrors.methodNotAllowed! });
    return out;
  }
}
