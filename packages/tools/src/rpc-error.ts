/**
 * A JSON-RPC error whose message is the message itself: the SDK's McpError would prefix it with
 * "MCP error <code>:", which clients then show twice.
 */
export function rpcError(code: number, message: string, data?: unknown): Error {
  return Object.assign(new Error(message), { code, ...(data === undefined ? {} : { data }) });
}
