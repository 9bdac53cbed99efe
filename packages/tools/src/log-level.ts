/**
 * The log level of a request's tool calls: `logging/setLevel` (kept for the key, 2025-11-25 and
 * earlier) and the level a 2026-07-28 request carries itself.
 */
import {
  LOG_LEVEL_META_KEY,
  ProtocolError,
  ProtocolErrorCode as RpcErrorCode,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { isLogLevel, LOG_LEVELS, type LogLevel } from './logging.ts';
import type { SessionOptions } from './server.ts';

// Looser than the SDK's schema, so an unknown level gets a message naming the levels there are.
const SetLevelParamsSchema = z.looseObject({ level: z.unknown() });

/** Answers `logging/setLevel`: the level is stored for the key, then `onSet` is told it. */
export function registerSetLevel(
  server: Server,
  options: SessionOptions,
  onSet: (level: LogLevel) => void,
): void {
  server.setRequestHandler('logging/setLevel', { params: SetLevelParamsSchema }, async ({ level }) => {
    if (!isLogLevel(level)) {
      throw new ProtocolError(
        RpcErrorCode.InvalidParams,
        `Unknown log level ${JSON.stringify(level)}; use one of ${LOG_LEVELS.join(', ')}.`,
      );
    }
    try {
      await options.setLogLevel?.(level);
    } catch (error) {
      options.onInternalError?.(error, 'logging/setLevel');
      throw new ProtocolError(
        RpcErrorCode.InternalError,
        'Calgate could not store the log level just now; try again in a few seconds.',
      );
    }
    onSet(level);
    return {};
  });
}

/** The per-request log level of a 2026-07-28 request (`io.modelcontextprotocol/logLevel`), if valid. */
export function envelopeLogLevel(ctx: ServerContext): LogLevel | undefined {
  const level = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[LOG_LEVEL_META_KEY];
  return isLogLevel(level) ? level : undefined;
}
