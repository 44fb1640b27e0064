import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AppError, type Logger } from '@support-agent/shared';
import * as z from 'zod';
import type { AgentOperationId, ApiContract, ToolSpec } from '../../domain/api-contract.js';
import type { AgentOperations, Caller, Inputs } from '../../domain/agent-operations.js';
import { errorBody, toAppError } from '../http/errors.js';

export const MCP_SERVER_INFO = { name: 'support-agent', version: '1.0.0' };

const INSTRUCTIONS =
  "Tools of the Support Agent API: search the organization's knowledge base, read the latest " +
  'FAQ digest, list and create support tickets, generate grounded answers. They take the same ' +
  'inputs and return the same JSON as the REST operations (see /docs). A failed call returns ' +
  'isError with the JSON body {"error":{"code","message","param?"}} as text.';

/** What one MCP HTTP request runs with. */
export interface McpRequestContext {
  caller: Caller;
  /** Set when the request is over its rate limit: every tool call then fails with it. */
  rejection?: AppError | undefined;
}

/**
 * A zod object that accepts any object at run time and publishes `schema` (from the OpenAPI
 * document) as its JSON Schema. The SDK validates tool arguments with zod before the handler
 * runs; its errors have their own format and zod counts string lengths in UTF-16 units. The
 * operations validate instead, exactly as for REST (code points, same codes and `param`).
 */
function documentedObject(schema: Record<string, unknown>) {
  return z.looseObject({}).meta(schema);
}

/**
 * The five operations as MCP tools, named and described by the OpenAPI document (`x-mcp-tool`,
 * summary, description), with its parameter/body and response schemas as input and output
 * schemas. Results are the REST bodies, as `structuredContent` and as JSON text.
 */
export class McpToolset {
  private readonly schemas: Map<
    string,
    { input: ReturnType<typeof documentedObject>; output: ReturnType<typeof documentedObject> }
  >;

  constructor(
    private readonly contract: ApiContract,
    private readonly operations: AgentOperations,
    private readonly logger: Logger,
  ) {
    // Built once: zod keeps metadata in a global registry keyed by schema instance.
    this.schemas = new Map(
      contract.tools.map((t) => [
        t.name,
        { input: documentedObject(t.inputSchema), output: documentedObject(t.outputSchema) },
      ]),
    );
  }

  get tools(): readonly ToolSpec[] {
    return this.contract.tools;
  }

  /** The tool named in a `tools/call`, if it is one of ours. */
  tool(name: unknown): ToolSpec | undefined {
    return this.contract.tools.find((t) => t.name === name);
  }

  /** A server for one stateless HTTP request, its tools bound to the request's caller. */
  createServer(ctx: McpRequestContext): McpServer {
    const server = new McpServer(MCP_SERVER_INFO, { instructions: INSTRUCTIONS });
    for (const tool of this.contract.tools) {
      const schemas = this.schemas.get(tool.name)!;
      server.registerTool(
        tool.name,
        {
          title: tool.title,
          description: tool.description,
          inputSchema: schemas.input,
          outputSchema: schemas.output,
          annotations: {
            title: tool.title,
            readOnlyHint: tool.readOnly,
            destructiveHint: false,
            idempotentHint: tool.readOnly,
            openWorldHint: false,
          },
        },
        (args) => this.call(tool, args, ctx),
      );
    }
    return server;
  }

  private async call(
    tool: ToolSpec,
    args: Inputs,
    ctx: McpRequestContext,
  ): Promise<CallToolResult> {
    try {
      if (ctx.rejection) throw ctx.rejection;
      const result = (await this.invoke(tool.operationId, ctx.caller, args)) as Record<
        string,
        unknown
      >;
      return {
        content: [{ type: 'text', text: JSON.stringify(result) }],
        structuredContent: result,
      };
    } catch (err) {
      const appError = toAppError(err);
      if (!appError.isTrusted) {
        this.logger.error(
          { err, reqId: ctx.caller.requestId, tool: tool.name },
          'MCP tool call failed',
        );
      }
      const reported = appError.isTrusted
        ? appError
        : new AppError('internal_error', 'internal error');
      // No structuredContent: clients check it against the tool's output schema.
      return {
        isError: true,
        content: [{ type: 'text', text: JSON.stringify(errorBody(reported)) }],
      };
    }
  }

  private invoke(id: AgentOperationId, caller: Caller, args: Inputs): Promise<unknown> {
    const ops = this.operations;
    switch (id) {
      case 'searchKnowledgeBase':
        return ops.searchKnowledgeBase(caller, args, 'body');
      case 'getFaqDigest':
        return ops.getFaqDigest(caller);
      case 'listTickets':
        return ops.listTickets(caller, args, 'body');
      case 'createTicket':
        return ops.createTicket(caller, args, 'body');
      case 'generateAnswer':
        return ops.generateAnswer(caller, args, 'body');
    }
  }
}
