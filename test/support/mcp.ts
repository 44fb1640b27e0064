// MCP helpers for the security suites: the SDK client, and raw JSON-RPC over HTTP for what the
// client does not expose (HTTP status, headers, malformed messages).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { api } from './stack.js';

export const MCP_TOOLS = [
  'search_knowledge_base',
  'get_faq_digest',
  'list_tickets',
  'create_ticket',
  'generate_answer',
] as const;
export type McpTool = (typeof MCP_TOOLS)[number];

/** The scope each tool (and REST operation) needs. */
export const TOOL_SCOPES: Record<McpTool, string> = {
  search_knowledge_base: 'kb:read',
  get_faq_digest: 'faq:read',
  list_tickets: 'tickets:read',
  create_ticket: 'tickets:write',
  generate_answer: 'answers:write',
};

export const PROTOCOL_VERSION = '2025-06-18';

export const MCP_HEADERS = {
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': PROTOCOL_VERSION,
};

export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: PROTOCOL_VERSION,
    capabilities: {},
    clientInfo: { name: 'security-suite', version: '0' },
  },
};

export function toolCall(name: string, args: unknown, id: number | string = 7) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } };
}

/** One JSON-RPC message (or batch) over plain HTTP. */
export function mcpRpc(
  baseUrl: string,
  body: unknown,
  options: { key?: string; headers?: Record<string, string>; rawBody?: string } = {},
) {
  return api(baseUrl, 'POST', '/api/mcp', {
    ...(options.key ? { key: options.key } : {}),
    ...(options.rawBody === undefined ? { body } : { rawBody: options.rawBody }),
    headers: {
      ...MCP_HEADERS,
      ...(options.rawBody === undefined ? {} : { 'content-type': 'application/json' }),
      ...options.headers,
    },
  });
}

export interface ToolResult {
  isError?: boolean;
  structuredContent?: Record<string, any>;
  content: Array<{ type: string; text?: string }>;
}

/** The result of a tools/call answered with HTTP 200, or undefined. */
export function toolResultOf(res: { status: number; json: any }): ToolResult | undefined {
  return res.status === 200 ? (res.json?.result as ToolResult | undefined) : undefined;
}

/** The REST error body carried by a failed tool result. */
export function toolErrorOf(result: ToolResult): { code: string; message: string } | undefined {
  if (!result.isError) return undefined;
  try {
    return JSON.parse(result.content[0]?.text ?? '').error;
  } catch {
    return undefined;
  }
}

/** tools/call through the SDK client. */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}

/** An SDK client connected with the key; close it when done. */
export async function mcpClient(baseUrl: string, key: string): Promise<Client> {
  const client = new Client({ name: 'security-suite', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/api/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return client;
}
