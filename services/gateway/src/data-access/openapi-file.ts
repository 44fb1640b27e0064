import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The OpenAPI document of the public API, `services/gateway/openapi/openapi.json`: the single
 * source of the contract. Read once at start-up (same relative path from src/ and dist/).
 */
export const OPENAPI_FILE = fileURLToPath(new URL('../../openapi/openapi.json', import.meta.url));

export function readOpenApiFile(path: string = OPENAPI_FILE): unknown {
  return JSON.parse(readFileSync(path, 'utf8')) as unknown;
}
