// How the services talk to an OpenAI-compatible server (openAiEnv). A subpath of its own
// (@support-agent/shared/openai): services without a model never load the SDK.
import OpenAI from 'openai';

export interface OpenAiServer {
  apiKey: string | undefined;
  baseURL: string | undefined;
}

/** A client that never retries on its own: every caller owns its time budget and retries. */
export function createOpenAiClient(server: OpenAiServer): OpenAI {
  return new OpenAI({
    // An OpenAI-compatible server may need no key; the client insists on one.
    apiKey: server.apiKey ?? 'unused',
    ...(server.baseURL ? { baseURL: server.baseURL } : {}),
    maxRetries: 0,
  });
}

export interface StructuredChat {
  model: string;
  system: string;
  user: string;
  /** The schema's name in the request (json_schema.name). */
  schemaName: string;
  schema: Record<string, unknown>;
}

/**
 * One deterministic (temperature 0) completion of a system and a user message whose output must
 * follow `schema` (strict JSON-schema response format), within `timeoutMs`, never retried here.
 */
export function structuredCompletion(
  client: OpenAI,
  chat: StructuredChat,
  timeoutMs: number,
): Promise<OpenAI.Chat.Completions.ChatCompletion> {
  return client.chat.completions.create(
    {
      model: chat.model,
      temperature: 0,
      messages: [
        { role: 'system', content: chat.system },
        { role: 'user', content: chat.user },
      ],
      response_format: {
        type: 'json_schema',
        json_schema: { name: chat.schemaName, strict: true, schema: chat.schema },
      },
    },
    { timeout: timeoutMs, maxRetries: 0 },
  );
}
