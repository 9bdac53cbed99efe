/** What the MCP route reads from a request before serving it: the JSON-RPC body's shape and headers. */
import { RISKY_TOOLS } from '@calgate/tools';
import { declaresFormElicitation } from '../client-capabilities.ts';

/** The JSON-RPC requests (not notifications or responses) in a body, one or a batch. */
export function requestCount(body: unknown): number {
  const messages = Array.isArray(body) ? body : [body];
  return messages.filter((message) => {
    const { method, id } = (message ?? {}) as { method?: unknown; id?: unknown };
    return typeof method === 'string' && (typeof id === 'string' || typeof id === 'number');
  }).length;
}

/** Whether a JSON-RPC message (or batch) calls a tool, the only requests that send log messages. */
export function callsTool(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((message) => (message as { method?: unknown } | null)?.method === 'tools/call');
}

/** Whether a JSON-RPC message (or batch) carries a progress token. */
export function wantsProgress(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((message) => {
    const meta = (message as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params?._meta;
    return meta?.progressToken !== undefined;
  });
}

/** Whether a JSON-RPC message (or batch) calls a tool that can need the person's confirmation. */
export function callsRiskyTool(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((message) => {
    const { method, params } = (message ?? {}) as { method?: unknown; params?: { name?: unknown } };
    return method === 'tools/call' && typeof params?.name === 'string' && RISKY_TOOLS.has(params.name);
  });
}

/** Whether a 2026-07-28 request's envelope declares form elicitation. */
export function envelopeDeclaresForms(body: unknown): boolean {
  const meta = (body as { params?: { _meta?: Record<string, unknown> } } | null)?.params?._meta;
  return declaresFormElicitation({ capabilities: meta?.['io.modelcontextprotocol/clientCapabilities'] });
}

/** The params of an initialize request in a message (or batch), if there is one. */
export function initializeParams(body: unknown): unknown {
  const messages = Array.isArray(body) ? body : [body];
  const found = messages.find((message) => (message as { method?: unknown } | null)?.method === 'initialize');
  return found === undefined ? undefined : ((found as { params?: unknown }).params ?? {});
}

export const FORWARDED_HEADERS = [
  'accept',
  'content-type',
  'mcp-protocol-version',
  'mcp-session-id',
  'last-event-id',
];
export function acceptsEventStream(accept: string | undefined): boolean {
  return accept?.split(',').some((type) => type.split(';')[0]?.trim() === 'text/event-stream') === true;
}
