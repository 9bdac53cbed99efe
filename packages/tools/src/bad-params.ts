/** Requests whose params do not fit their method, answered as JSON-RPC says (invalid params). */
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  GetPromptRequestSchema,
  InitializeRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/core';
import { ProtocolError, ProtocolErrorCode as RpcErrorCode, type Server } from '@modelcontextprotocol/server';
import type { z } from 'zod';
import { describeParamsError } from './validation.ts';

/** The request schemas of the methods Calgate answers, to say what was wrong with bad params. */
const REQUEST_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  initialize: InitializeRequestSchema,
  'tools/list': ListToolsRequestSchema,
  'tools/call': CallToolRequestSchema,
  'resources/list': ListResourcesRequestSchema,
  'resources/templates/list': ListResourceTemplatesRequestSchema,
  'resources/read': ReadResourceRequestSchema,
  'prompts/list': ListPromptsRequestSchema,
  'prompts/get': GetPromptRequestSchema,
  'completion/complete': CompleteRequestSchema,
};

type RequestHandler = (request: { method: string }, ctx: unknown) => Promise<unknown>;

/**
 * The SDK checks a request's params against its method's schema and answers a mismatch as an
 * internal error (-32603) carrying the raw schema dump. A request whose params do not fit its
 * method is invalid params (-32602) by JSON-RPC, with a message a person can act on.
 */
export function answerBadParamsByTheBook(server: Server): void {
  const handlers = (server as unknown as { _requestHandlers: Map<string, RequestHandler> })._requestHandlers;
  for (const [method, handler] of handlers) {
    const schema = REQUEST_SCHEMAS[method];
    if (schema === undefined) {
      continue;
    }
    handlers.set(method, async (request, ctx) => {
      try {
        return await handler(request, ctx);
      } catch (error) {
        // The SDK's own checks dump the schema's issues; params that fit reach Calgate's handlers,
        // whose errors pass unchanged.
        const parsed = schema.safeParse(request);
        if (!parsed.success) {
          throw new ProtocolError(RpcErrorCode.InvalidParams, describeParamsError(method, parsed.error));
        }
        throw error;
      }
    });
  }
}
