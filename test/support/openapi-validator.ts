// Validates HTTP requests and responses against an OpenAPI 3.0 document with Ajv:
// every path, method, path/query parameter and JSON body must be described by the
// document. OpenAPI 3.0 schemas are not JSON Schema; they are converted first:
// `nullable: true` becomes a "null" type alternative, `example` is dropped, and
// `#/components/schemas/X` references resolve inside the document.
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type SchemaObject = { [key: string]: Json };

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: SchemaObject;
}

interface Operation {
  operationId?: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: SchemaObject }> };
  responses?: Record<string, { content?: Record<string, { schema?: SchemaObject }> }>;
}

interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, SchemaObject> };
}

export interface MatchedOperation {
  template: string;
  method: string;
  operation: Operation;
  pathParams: Record<string, string>;
}

const DOC_ID = 'openapi-document';
const DROPPED_KEYWORDS = new Set(['example', 'xml', 'externalDocs', 'discriminator']);

/** Converts one OpenAPI 3.0 schema (recursively) into JSON Schema that Ajv accepts. */
export function toJsonSchema(schema: Json, inAlternatives = false): Json {
  if (Array.isArray(schema)) return schema.map((s) => toJsonSchema(s));
  if (schema === null || typeof schema !== 'object') return schema;
  const out: SchemaObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (DROPPED_KEYWORDS.has(key) || key === 'nullable') continue;
    if (key === '$ref' && typeof value === 'string' && value.startsWith('#/')) {
      out.$ref = `${DOC_ID}${value}`;
    } else if (key === 'properties' || key === 'patternProperties') {
      // Property names are data, not keywords.
      out[key] = Object.fromEntries(
        Object.entries(value as SchemaObject).map(([k, v]) => [k, toJsonSchema(v)]),
      );
    } else if (key === 'anyOf' || key === 'oneOf' || key === 'allOf') {
      out[key] = (value as Json[]).map((v) => toJsonSchema(v, true));
    } else if (key === 'default' || key === 'enum' || key === 'const') {
      out[key] = value;
    } else {
      out[key] = toJsonSchema(value);
    }
  }
  if (schema.nullable === true) {
    const type = out.type;
    if (typeof type === 'string') {
      out.type = [type, 'null'];
      if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    } else if (Array.isArray(type)) {
      if (!type.includes('null')) out.type = [...type, 'null'];
    } else if (
      out.$ref !== undefined ||
      out.anyOf !== undefined ||
      out.oneOf !== undefined ||
      out.allOf !== undefined
    ) {
      const { description, default: dflt, ...rest } = out;
      return {
        ...(description !== undefined ? { description } : {}),
        ...(dflt !== undefined ? { default: dflt } : {}),
        anyOf: [rest, { type: 'null' }],
      };
    } else if (inAlternatives) {
      // `anyOf: [{$ref: X}, {nullable: true}]` is how the document spells "X or null".
      return { ...out, type: 'null' };
    }
  }
  return out;
}

/** Integer and float formats of the document (Rust types), checked by range. */
const NUMERIC_FORMATS: Record<string, (n: number) => boolean> = {
  uint: (n) => Number.isInteger(n) && n >= 0,
  uint8: (n) => Number.isInteger(n) && n >= 0 && n <= 0xff,
  uint16: (n) => Number.isInteger(n) && n >= 0 && n <= 0xffff,
  uint32: (n) => Number.isInteger(n) && n >= 0 && n <= 0xffffffff,
  uint64: (n) => Number.isInteger(n) && n >= 0,
  int32: (n) => Number.isInteger(n) && n >= -0x80000000 && n <= 0x7fffffff,
  int64: (n) => Number.isInteger(n),
  float: (n) => Number.isFinite(n),
  double: (n) => Number.isFinite(n),
};

export class OpenApiValidator {
  private readonly ajv: Ajv;
  private readonly routes: {
    template: string;
    regex: RegExp;
    names: string[];
    methods: Record<string, Operation>;
  }[];
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(readonly document: OpenApiDocument) {
    this.ajv = new Ajv({
      allErrors: true,
      strict: true,
      strictTypes: false,
      strictRequired: false,
      allowUnionTypes: true,
    });
    // ajv-formats is CommonJS; its default export arrives wrapped under ESM.
    const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
      addFormatsModule) as (ajv: Ajv) => Ajv;
    addFormats(this.ajv);
    for (const [name, check] of Object.entries(NUMERIC_FORMATS))
      this.ajv.addFormat(name, { type: 'number', validate: check });
    this.ajv.addFormat('binary', true);
    this.ajv.addFormat('partial-date-time', true);
    // The converted schemas live in one document under their original JSON pointers.
    this.ajv.addKeyword({ keyword: 'components' });
    const schemas = Object.fromEntries(
      Object.entries(document.components.schemas).map(([k, v]) => [k, toJsonSchema(v)]),
    );
    this.ajv.addSchema({ $id: DOC_ID, components: { schemas } } as SchemaObject, DOC_ID);
    this.routes = Object.entries(document.paths).map(([template, methods]) => {
      const names: string[] = [];
      const pattern = template
        .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
        .replace(/\{([^}]+)\}/g, (_m, name: string) => {
          names.push(name);
          return '([^/]+)';
        });
      return { template, regex: new RegExp(`^${pattern}$`), names, methods };
    });
    // Literal segments win over parameters (/collections/aliases vs /collections/{collection_name}).
    this.routes.sort((a, b) => a.names.length - b.names.length);
  }

  static fromFile(path: string): OpenApiValidator {
    return new OpenApiValidator(JSON.parse(readFileSync(path, 'utf8')) as OpenApiDocument);
  }

  /** The operation for a method and path, or an error message. */
  match(method: string, pathname: string): MatchedOperation | string {
    const m = method.toLowerCase();
    let pathKnown = false;
    for (const route of this.routes) {
      const found = route.regex.exec(pathname);
      if (!found) continue;
      pathKnown = true;
      const operation = route.methods[m];
      if (!operation) continue;
      const pathParams = Object.fromEntries(
        route.names.map((n, i) => [n, decodeURIComponent(found[i + 1]!)]),
      );
      return { template: route.template, method: m, operation, pathParams };
    }
    return pathKnown ? `method ${method} not allowed on ${pathname}` : `unknown path ${pathname}`;
  }

  /** Every mismatch between a request and the document (empty when valid). */
  validateRequest(
    method: string,
    url: URL,
    body: unknown,
    contentType: string | undefined,
  ): string[] {
    const matched = this.match(method, url.pathname);
    if (typeof matched === 'string') return [matched];
    const where = `${method} ${matched.template}`;
    const errors: string[] = [];
    const params = matched.operation.parameters ?? [];

    for (const p of params.filter((p) => p.in === 'path')) {
      const value = matched.pathParams[p.name];
      if (value === undefined) errors.push(`${where}: missing path parameter ${p.name}`);
      else
        errors.push(
          ...this.check(p.schema ?? {}, coerce(value), `${where} path parameter ${p.name}`),
        );
    }
    const queryParams = params.filter((p) => p.in === 'query');
    for (const name of new Set(url.searchParams.keys())) {
      const p = queryParams.find((q) => q.name === name);
      if (!p) {
        errors.push(`${where}: unknown query parameter ${name}`);
        continue;
      }
      const raw = url.searchParams.get(name)!;
      const asTyped = this.check(p.schema ?? {}, coerce(raw), `${where} query parameter ${name}`);
      if (asTyped.length > 0 && this.check(p.schema ?? {}, raw, '').length > 0)
        errors.push(...asTyped);
    }
    for (const p of queryParams) {
      if (p.required && !url.searchParams.has(p.name))
        errors.push(`${where}: missing query parameter ${p.name}`);
    }

    const bodySpec = matched.operation.requestBody;
    if (body === undefined) {
      if (bodySpec?.required) errors.push(`${where}: request body required`);
    } else if (!bodySpec) {
      errors.push(`${where}: the operation takes no request body`);
    } else {
      const media = bodySpec.content?.['application/json'];
      if (!media) errors.push(`${where}: no application/json request body in the document`);
      else if (!contentType?.startsWith('application/json'))
        errors.push(`${where}: content-type ${contentType} is not application/json`);
      else errors.push(...this.check(media.schema ?? {}, body, `${where} request body`));
    }
    return errors;
  }

  /** Mismatches between a response body and the document's schema for its status. */
  validateResponse(method: string, pathname: string, status: number, body: unknown): string[] {
    const matched = this.match(method, pathname);
    if (typeof matched === 'string') return [matched];
    const responses = matched.operation.responses ?? {};
    const spec =
      responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
    if (!spec) return [`${method} ${matched.template}: status ${status} is not in the document`];
    const schema = spec.content?.['application/json']?.schema;
    return schema
      ? this.check(schema, body, `${method} ${matched.template} response ${status}`)
      : [];
  }

  private check(schema: SchemaObject, value: unknown, label: string): string[] {
    const key = JSON.stringify(schema);
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(toJsonSchema(schema) as SchemaObject);
      this.compiled.set(key, validate);
    }
    if (validate(value)) return [];
    return [`${label}: ${formatErrors(validate.errors ?? [])}`];
  }
}

/** Query and path values arrive as strings; try them as the JSON scalar they spell. */
function coerce(raw: string): unknown {
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  if (raw === 'null') return null;
  if (/^-?\d+(\.\d+)?$/.test(raw)) return Number(raw);
  return raw;
}

function formatErrors(errors: ErrorObject[]): string {
  // anyOf failures list every branch; the deepest paths are the informative ones.
  const sorted = [...errors].sort((a, b) => b.instancePath.length - a.instancePath.length);
  return sorted
    .slice(0, 5)
    .map(
      (e) =>
        `${e.instancePath || '/'} ${e.message ?? e.keyword}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`,
    )
    .join('; ');
}
