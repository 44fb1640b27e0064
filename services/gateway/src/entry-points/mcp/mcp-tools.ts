// The low-level Server (not McpServer): the tools are described by JSON Schemas taken verbatim
// from the OpenAPI document, the list depends on the caller's key, and an unknown tool must be a
// JSON-RPC error — McpServer wants zod schemas and turns every failure into a tool result.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { AppError, type Logger } from '@support-agent/shared';
import type { AgentOperationId, ApiContract, ToolSpec } from '../../domain/api-contract.js';
import type { AgentOperations, Caller, Inputs } from '../../domain/agent-operations.js';
import type { Scope } from '../../domain/scopes.js';
import { errorBody, toAppError } from '../http/errors.js';

export const MCP_SERVER_INFO = { name: 'support-agent', version: '1.0.0' };

const INSTRUCTIONS =
  "Tools of the Support Agent API: search the organization's knowledge base, read the latest " +
  'FAQ digest, list and create support tickets, generate grounded answers. They take the same ' +
  'inputs and return the same JSON as the REST operations (see /docs). The list holds the tools ' +
  "the API key's scopes allow. A failed call returns isError with the REST error body " +
  '{"error":{"code","message","param?"}} as text.';

/** What one MCP HTTP request runs with. */
export interface McpRequestContext {
  caller: Caller;
  /** The scopes of the caller's key: tools/list shows only the tools they allow. */
  scopes: readonly Scope[];
  /** Set when the request is over its rate limit: every tool call then fails with it. */
  rejection?: AppError | undefined;
}

/**
 * The five operations as MCP tools, named and described by the OpenAPI document (`x-mcp-tool`,
 * summary, description), with its parameter/body and response schemas as input and output
 * schemas. Results are the REST bodies, as `structuredContent` and as JSON text.
 */
export class McpToolset {
  /** tools/list entries, built once. */
  private readonly listed: ReadonlyMap<string, Tool>;

  constructor(
    private readonly contract: ApiContract,
    private readonly operations: AgentOperations,
    private readonly logger: Logger,
  ) {
    this.listed = new Map(contract.tools.map((t) => [t.name, listEntry(t)]));
  }

  get tools(): readonly ToolSpec[] {
    return this.contract.tools;
  }

  /** The tool named in a `tools/call`, if it is one of ours. */
  tool(name: unknown): ToolSpec | undefined {
    return this.contract.tools.find((t) => t.name === name);
  }

  /**
   * A server for one stateless HTTP request. tools/list shows the tools the key's scopes allow
   * (a call of another one of ours is refused with HTTP 403 before it gets here); calling a
   * name that is no tool of ours is JSON-RPC error -32602 (invalid params), as the MCP
   * specification's tools/call error handling asks.
   */
  createServer(ctx: McpRequestContext): Server {
    const server = new Server(MCP_SERVER_INFO, {
      capabilities: { tools: {} },
      instructions: INSTRUCTIONS,
    });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: this.contract.tools
        .filter((t) => ctx.scopes.includes(t.scope))
        .map((t) => this.listed.get(t.name)!),
    }));
    server.setRequestHandler(CallToolRequestSchema, (request) => {
      const tool = this.tool(request.params.name);
      if (!tool) {
        throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`, {
          tools: this.contract.tools.filter((t) => ctx.scopes.includes(t.scope)).map((t) => t.name),
        });
      }
      return this.call(tool, request.params.arguments ?? {}, ctx);
    });
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

/** The tools/list entry of a tool: the document's schemas as they are, hints from the method. */
function listEntry(tool: ToolSpec): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema as Tool['inputSchema'],
    outputSchema: tool.outputSchema as NonNullable<Tool['outputSchema']>,
    annotations: {
      title: tool.title,
      readOnlyHint: tool.readOnly,
      destructiveHint: false,
      idempotentHint: tool.readOnly,
      openWorldHint: false,
    },
  };
}
