import { isScope, SCOPES, type Scope } from './scopes.js';

// The public API contract, read from the OpenAPI document (openapi/openapi.json), which is the
// single source: the REST routes, their scopes, the input limits the gateway enforces and the
// MCP tools' schemas are all derived from it here, and start-up fails when the document is
// inconsistent, so code and document cannot drift apart.

export type JsonObject = { [key: string]: unknown };

/** The five agent operations, by operationId, in document order. */
export const AGENT_OPERATIONS = [
  'searchKnowledgeBase',
  'getFaqDigest',
  'listTickets',
  'createTicket',
  'generateAnswer',
] as const;
export type AgentOperationId = (typeof AGENT_OPERATIONS)[number];

/** Every agent operation is served under each of these prefixes. */
export const API_PREFIXES = ['/api/v1/agent', '/api/agent'] as const;

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
/** Methods an agent operation may use (lower case, as in the document and express). */
export const ROUTE_METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
export type RouteMethod = (typeof ROUTE_METHODS)[number];

export interface StringLimits {
  required: boolean;
  /** In Unicode code points, as JSON Schema counts `maxLength`. */
  maxLength: number;
}
export interface RequiredStringLimits extends StringLimits {
  required: true;
}
export interface IntegerLimits {
  min: number;
  max: number;
  default: number | undefined;
}
export interface EnumLimits {
  values: readonly string[];
}
export interface PatternLimits {
  maxLength: number;
  pattern: RegExp;
}

/** The limits of every input of the five operations, as the document states them. */
export interface InputRules {
  searchKnowledgeBase: { query: RequiredStringLimits; limit: IntegerLimits };
  listTickets: {
    status: EnumLimits;
    priority: EnumLimits;
    category: PatternLimits;
    limit: IntegerLimits;
    cursor: StringLimits;
  };
  createTicket: {
    content: RequiredStringLimits;
    authorName: StringLimits;
    idempotencyKey: StringLimits;
    /** The `Idempotency-Key` header (REST only). */
    idempotencyKeyHeader: StringLimits;
  };
  generateAnswer: { question: RequiredStringLimits };
}

export interface ScopeInfo {
  description: string;
  /** operationIds that require the scope. */
  operations: string[];
}

/** An HTTP route of an agent operation, relative to each prefix. */
export interface AgentRoute {
  operationId: AgentOperationId;
  method: RouteMethod;
  /** Path below the prefix, e.g. `/kb/search`. */
  path: string;
  scope: Scope;
  /** The status of a successful call (200, or 201 for a creation). */
  successStatus: number;
}

/** An MCP tool mirroring one operation: name, texts and JSON Schemas from the document. */
export interface ToolSpec {
  name: string;
  operationId: AgentOperationId;
  title: string;
  description: string;
  scope: Scope;
  /** GET operations only read. */
  readOnly: boolean;
  /** The operation's parameters or request body as one object schema, `$ref`s inlined. */
  inputSchema: JsonObject;
  /** The success response body schema, `$ref`s inlined. */
  outputSchema: JsonObject;
}

export class ContractError extends Error {
  constructor(message: string) {
    super(`OpenAPI document: ${message}`);
    this.name = 'ContractError';
  }
}

interface OperationEntry {
  method: string;
  paths: string[];
  operation: JsonObject;
}

const isObject = (v: unknown): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function objectAt(v: unknown, where: string): JsonObject {
  if (!isObject(v)) throw new ContractError(`${where} must be an object`);
  return v;
}

export class ApiContract {
  readonly rules: InputRules;
  readonly routes: readonly AgentRoute[];
  readonly tools: readonly ToolSpec[];
  readonly scopeCatalogue: Readonly<Record<Scope, ScopeInfo>>;
  private readonly operations = new Map<string, OperationEntry>();

  constructor(readonly document: JsonObject) {
    if (typeof document.openapi !== 'string' || !document.openapi.startsWith('3.1.')) {
      throw new ContractError('expected OpenAPI 3.1');
    }
    for (const [path, item] of Object.entries(objectAt(document.paths, 'paths'))) {
      const pathItem = objectAt(this.resolve(item), `paths.${path}`);
      for (const method of HTTP_METHODS) {
        const operation = pathItem[method];
        if (!isObject(operation)) continue;
        const id = operation.operationId;
        if (typeof id !== 'string') throw new ContractError(`${method} ${path} has no operationId`);
        const known = this.operations.get(id);
        if (!known) this.operations.set(id, { method, paths: [path], operation });
        else if (known.operation === operation) known.paths.push(path);
        else throw new ContractError(`operationId ${id} names two different operations`);
      }
    }
    this.scopeCatalogue = this.readScopeCatalogue();
    this.routes = AGENT_OPERATIONS.map((id) => this.route(id));
    this.rules = this.readRules();
    this.tools = AGENT_OPERATIONS.map((id) => this.toolSpec(id));
  }

  /** The scope an operation needs (`x-required-scope`, equal to its security requirement). */
  requiredScope(id: AgentOperationId): Scope {
    return this.routes.find((r) => r.operationId === id)!.scope;
  }

  /** The values of an enum schema of `components.schemas`. */
  enumValues(schemaName: string): readonly string[] {
    const schema = objectAt(
      this.resolve({ $ref: `#/components/schemas/${schemaName}` }),
      `components.schemas.${schemaName}`,
    );
    const values = schema.enum;
    if (!Array.isArray(values) || !values.every((v) => typeof v === 'string')) {
      throw new ContractError(`components.schemas.${schemaName} is not a string enum`);
    }
    return values as string[];
  }

  /** The document as served: `servers` names this deployment. */
  servedDocument(servers: readonly { url: string; description: string }[]): JsonObject {
    return { ...this.document, servers };
  }

  /** Follows local `$ref`s (`#/a/b`) until a non-reference value. */
  resolve(value: unknown, seen: Set<string> = new Set()): unknown {
    if (!isObject(value) || typeof value.$ref !== 'string') return value;
    const ref = value.$ref;
    if (!ref.startsWith('#/')) throw new ContractError(`only local $refs are supported: ${ref}`);
    if (seen.has(ref)) throw new ContractError(`circular $ref ${ref}`);
    seen.add(ref);
    let target: unknown = this.document;
    for (const raw of ref.slice(2).split('/')) {
      const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      target = isObject(target) ? target[key] : undefined;
      if (target === undefined) throw new ContractError(`unresolvable $ref ${ref}`);
    }
    return this.resolve(target, seen);
  }

  /** A schema with every `$ref` replaced by its target (siblings such as description kept). */
  inline(schema: unknown): unknown {
    if (Array.isArray(schema)) return schema.map((s) => this.inline(s));
    if (!isObject(schema)) return schema;
    if (typeof schema.$ref === 'string') {
      const { $ref, ...siblings } = schema;
      const target = this.inline(this.resolve({ $ref }));
      return { ...(target as JsonObject), ...(this.inline(siblings) as JsonObject) };
    }
    return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, this.inline(v)]));
  }

  private entry(id: string): OperationEntry {
    const entry = this.operations.get(id);
    if (!entry) throw new ContractError(`operation ${id} is missing`);
    return entry;
  }

  private readScopeCatalogue(): Record<Scope, ScopeInfo> {
    const raw = objectAt(this.document['x-api-scopes'], 'x-api-scopes');
    const names = Object.keys(raw);
    if (names.join() !== SCOPES.join()) {
      throw new ContractError(`x-api-scopes must list ${SCOPES.join(', ')} (in this order)`);
    }
    const catalogue = {} as Record<Scope, ScopeInfo>;
    for (const scope of SCOPES) {
      const info = objectAt(raw[scope], `x-api-scopes.${scope}`);
      const ops = info.operations;
      if (typeof info.description !== 'string' || !Array.isArray(ops)) {
        throw new ContractError(`x-api-scopes.${scope} needs a description and operations`);
      }
      for (const op of ops) if (typeof op !== 'string') throw new ContractError('bad operation');
      catalogue[scope] = { description: info.description, operations: [...(ops as string[])] };
    }
    return catalogue;
  }

  private route(id: AgentOperationId): AgentRoute {
    const { method, paths, operation } = this.entry(id);
    const scope = operation['x-required-scope'];
    if (!isScope(scope)) throw new ContractError(`${id}: x-required-scope is not a known scope`);
    const security = operation.security;
    const bearer =
      Array.isArray(security) && security.length === 1 && isObject(security[0])
        ? security[0].bearerAuth
        : undefined;
    if (!Array.isArray(bearer) || bearer.length !== 1 || bearer[0] !== scope) {
      throw new ContractError(`${id}: security must be [{bearerAuth: ["${scope}"]}]`);
    }
    if (!this.scopeCatalogue[scope].operations.includes(id)) {
      throw new ContractError(`${id}: x-api-scopes.${scope}.operations must list it`);
    }
    const prefix = API_PREFIXES.find((p) => paths[0]!.startsWith(`${p}/`));
    const suffix = prefix ? paths[0]!.slice(prefix.length) : paths[0]!;
    const expected = API_PREFIXES.map((p) => `${p}${suffix}`);
    if (!prefix || paths.length !== expected.length || expected.some((p) => !paths.includes(p))) {
      throw new ContractError(`${id} must be served at ${expected.join(' and ')}`);
    }
    if (!ROUTE_METHODS.includes(method as RouteMethod)) {
      throw new ContractError(`${id}: method ${method} is not supported`);
    }
    return {
      operationId: id,
      method: method as RouteMethod,
      path: suffix,
      scope,
      successStatus: this.successStatus(id),
    };
  }

  private parameter(id: AgentOperationId, name: string, location: string): JsonObject {
    const params = this.entry(id).operation.parameters;
    for (const p of Array.isArray(params) ? params : []) {
      const param = objectAt(this.resolve(p), `${id} parameter`);
      if (param.name === name && param.in === location) return param;
    }
    throw new ContractError(`${id} has no ${location} parameter ${name}`);
  }

  private requestBodySchema(id: AgentOperationId): JsonObject {
    const body = objectAt(this.resolve(this.entry(id).operation.requestBody), `${id} requestBody`);
    const content = objectAt(body.content, `${id} requestBody.content`);
    const media = objectAt(content['application/json'], `${id} requestBody application/json`);
    return objectAt(this.resolve(media.schema), `${id} request schema`);
  }

  /** A body property's schema and whether the body requires it. */
  private bodyField(id: AgentOperationId, name: string): { schema: JsonObject; required: boolean } {
    const body = this.requestBodySchema(id);
    const props = objectAt(body.properties, `${id} request schema properties`);
    const schema = objectAt(this.resolve(props[name]), `${id} body field ${name}`);
    return { schema, required: Array.isArray(body.required) && body.required.includes(name) };
  }

  private readRules(): InputRules {
    const q = (id: AgentOperationId, name: string) => {
      const p = this.parameter(id, name, 'query');
      return {
        schema: objectAt(this.resolve(p.schema), `${id} ${name} schema`),
        required: p.required === true,
      };
    };
    const header = this.parameter('createTicket', 'Idempotency-Key', 'header');
    return {
      searchKnowledgeBase: {
        query: requiredString(q('searchKnowledgeBase', 'query'), 'searchKnowledgeBase query'),
        limit: integer(q('searchKnowledgeBase', 'limit').schema, 'searchKnowledgeBase limit'),
      },
      listTickets: {
        status: enumOf(q('listTickets', 'status').schema, 'listTickets status'),
        priority: enumOf(q('listTickets', 'priority').schema, 'listTickets priority'),
        category: patternOf(q('listTickets', 'category').schema, 'listTickets category'),
        limit: integer(q('listTickets', 'limit').schema, 'listTickets limit'),
        cursor: string(q('listTickets', 'cursor'), 'listTickets cursor'),
      },
      createTicket: {
        content: requiredString(this.bodyField('createTicket', 'content'), 'content'),
        authorName: string(this.bodyField('createTicket', 'authorName'), 'authorName'),
        idempotencyKey: string(this.bodyField('createTicket', 'idempotencyKey'), 'idempotencyKey'),
        idempotencyKeyHeader: string(
          {
            schema: objectAt(this.resolve(header.schema), 'Idempotency-Key schema'),
            required: header.required === true,
          },
          'Idempotency-Key',
        ),
      },
      generateAnswer: {
        question: requiredString(this.bodyField('generateAnswer', 'question'), 'question'),
      },
    };
  }

  private toolSpec(id: AgentOperationId): ToolSpec {
    const { method, operation } = this.entry(id);
    const name = operation['x-mcp-tool'];
    if (typeof name !== 'string' || !/^[a-z][a-z0-9_]{0,63}$/.test(name)) {
      throw new ContractError(`${id}: x-mcp-tool must name the MCP tool`);
    }
    const scope = this.requiredScope(id);
    const title = typeof operation.summary === 'string' ? operation.summary : id;
    const description = [operation.description, `Requires the ${scope} scope.`]
      .filter((s) => typeof s === 'string')
      .join(' ');
    return {
      name,
      operationId: id,
      title,
      description,
      scope,
      readOnly: method === 'get',
      inputSchema: this.toolInputSchema(id),
      outputSchema: this.toolOutputSchema(id),
    };
  }

  /** Query parameters become properties (with their descriptions); a JSON body is used as is. */
  private toolInputSchema(id: AgentOperationId): JsonObject {
    const { operation } = this.entry(id);
    if (operation.requestBody !== undefined) {
      return this.inline(this.requestBodySchema(id)) as JsonObject;
    }
    const properties: JsonObject = {};
    const required: string[] = [];
    for (const p of Array.isArray(operation.parameters) ? operation.parameters : []) {
      const param = objectAt(this.resolve(p), `${id} parameter`);
      if (param.in !== 'query') continue;
      const name = String(param.name);
      properties[name] = {
        ...(this.inline(param.schema) as JsonObject),
        ...(typeof param.description === 'string' ? { description: param.description } : {}),
      };
      if (param.required === true) required.push(name);
    }
    return { type: 'object', properties, ...(required.length ? { required } : {}) };
  }

  /** The one 2xx status of an operation. */
  private successStatus(id: AgentOperationId): number {
    const responses = objectAt(this.entry(id).operation.responses, `${id} responses`);
    const success = Object.keys(responses).filter((status) => /^2[0-9][0-9]$/.test(status));
    if (success.length !== 1) throw new ContractError(`${id} needs exactly one 2xx response`);
    return Number(success[0]);
  }

  private toolOutputSchema(id: AgentOperationId): JsonObject {
    const responses = objectAt(this.entry(id).operation.responses, `${id} responses`);
    const success = String(this.successStatus(id));
    const response = objectAt(this.resolve(responses[success]), `${id} ${success}`);
    const media = objectAt(
      objectAt(response.content, `${id} ${success} content`)['application/json'],
      `${id} ${success} application/json`,
    );
    const schema = this.inline(media.schema) as JsonObject;
    // MCP output schemas describe an object at the root.
    return schema.type === undefined ? { type: 'object', ...schema } : schema;
  }
}

function positiveInteger(v: unknown, where: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) {
    throw new ContractError(`${where} needs an integer limit`);
  }
  return v;
}

function string(field: { schema: JsonObject; required: boolean }, where: string): StringLimits {
  if (field.schema.type !== 'string') throw new ContractError(`${where} must be a string`);
  return { required: field.required, maxLength: positiveInteger(field.schema.maxLength, where) };
}

function requiredString(
  field: { schema: JsonObject; required: boolean },
  where: string,
): RequiredStringLimits {
  const limits = string(field, where);
  if (!limits.required) throw new ContractError(`${where} must be required`);
  return { ...limits, required: true };
}

function integer(schema: JsonObject, where: string): IntegerLimits {
  if (schema.type !== 'integer') throw new ContractError(`${where} must be an integer`);
  const dflt = schema.default;
  return {
    min: positiveInteger(schema.minimum, `${where} minimum`),
    max: positiveInteger(schema.maximum, `${where} maximum`),
    default: dflt === undefined ? undefined : positiveInteger(dflt, `${where} default`),
  };
}

function patternOf(schema: JsonObject, where: string): PatternLimits {
  if (schema.type !== 'string' || typeof schema.pattern !== 'string')
    throw new ContractError(`${where} must be a string with a pattern`);
  return {
    maxLength: positiveInteger(schema.maxLength, where),
    pattern: new RegExp(schema.pattern, 'u'),
  };
}

function enumOf(schema: JsonObject, where: string): EnumLimits {
  const values = schema.enum;
  if (!Array.isArray(values) || values.length === 0 || values.some((v) => typeof v !== 'string')) {
    throw new ContractError(`${where} must be a string enum`);
  }
  return { values: values as string[] };
}
