/**
 * The answer to an over-limit POST that calls tools. MCP SDK clients turn an HTTP 429 into an
 * exception the agent rarely sees; a tool result with `isError` reaches the model, which can then
 * wait. Other requests in a batch get a JSON-RPC error, notifications nothing.
 */

interface RpcMessage {
  method?: unknown;
  id?: unknown;
}

const RATE_LIMITED_RPC_CODE = -32000;

function isRequest(message: unknown): message is RpcMessage & { id: string | number } {
  const { method, id } = (message ?? {}) as RpcMessage;
  return typeof method === 'string' && (typeof id === 'string' || typeof id === 'number');
}

/**
 * JSON-RPC responses for a body with at least one tools/call, else undefined (answer 429). A
 * 2026-07-28 request (`modern`) gets the result type that revision requires of every result.
 */
export function rateLimitedToolCalls(body: unknown, seconds: number, modern = false): unknown {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  const requests = messages.filter(isRequest);
  if (!requests.some((message) => message.method === 'tools/call')) {
    return undefined;
  }
  const text = `Rate limit of this API key reached; retry in ${seconds} s.`;
  const answers = requests.map((message) =>
    message.method === 'tools/call'
      ? {
          jsonrpc: '2.0',
          id: message.id,
          result: {
            isError: true,
            content: [{ type: 'text', text }],
            ...(modern ? { resultType: 'complete' } : {}),
          },
        }
      : {
          jsonrpc: '2.0',
          id: message.id,
          error: { code: RATE_LIMITED_RPC_CODE, message: text, data: { retryAfterSeconds: seconds } },
        },
  );
  return Array.isArray(body) ? answers : answers[0];
}
