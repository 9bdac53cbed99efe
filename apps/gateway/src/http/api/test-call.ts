import { CalgateError } from '@calgate/core';
import { loadKeyAccessById } from '@calgate/store';
import { CalendarAccess, callTool, catalogue } from '@calgate/tools';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { VERSION } from '../../version.ts';
import { principalOf } from '../mcp.ts';
import { type ApiDeps, parse } from './deps.ts';

const KeyParams = z.strictObject({ id: z.string().min(1).max(64) });

/** A test call gives up after this long rather than leave the button spinning. */
const TEST_CALL_TIMEOUT_MS = 15_000;

interface Listed {
  id: string;
  summary: string;
  accountEmail: string;
  canRead: boolean;
  canWrite: boolean;
}

/**
 * `POST /api/v1/keys/:id/test-call`: runs list_calendars as the key, through the same catalogue
 * and grant checks an agent's call goes through (Calgate keeps only the secret's hash, so it
 * cannot call its own MCP endpoint with it), and answers which calendars the key sees and how
 * long the call took.
 */
export function registerTestCallRoute(app: FastifyInstance, deps: ApiDeps): void {
  app.post('/api/v1/keys/:id/test-call', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    const { id } = parse(KeyParams, request.params);
    const key = await loadKeyAccessById(deps.db, tenantId, id);
    if (key === null) {
      throw new CalgateError('not_found', `No API key ${id} in this tenant.`);
    }
    if (key.revokedAt !== null) {
      throw new CalgateError('conflict', `API key ${id} is revoked; agents using it are refused.`);
    }
    if (key.expiresAt !== null && key.expiresAt.getTime() <= Date.now()) {
      throw new CalgateError('conflict', `API key ${id} expired on ${key.expiresAt.toISOString()}.`);
    }
    const tools = catalogue();
    const entry = tools.get('list_calendars');
    if (entry === undefined) {
      throw new CalgateError('internal', 'The tool catalogue has no list_calendars.');
    }
    const started = performance.now();
    const result = await callTool(
      {
        catalogue: tools,
        access: new CalendarAccess(principalOf(key), deps.providers),
        requestId: request.id,
        version: VERSION,
        publicUrl: deps.publicUrl,
      },
      entry,
      {},
      AbortSignal.timeout(TEST_CALL_TIMEOUT_MS),
    );
    const latencyMs = Math.round(performance.now() - started);
    const content = result.structuredContent as { calendars?: Listed[]; message?: string } | undefined;
    const text = result.content
      .map((part) => (part.type === 'text' ? part.text : ''))
      .join(' ')
      .trim();
    return {
      tool: 'list_calendars',
      ok: result.isError !== true,
      latencyMs,
      calendars: (content?.calendars ?? []).map(
        ({ id: calendarId, summary, accountEmail, canRead, canWrite }) => ({
          id: calendarId,
          summary,
          accountEmail,
          canRead,
          canWrite,
        }),
      ),
      ...(result.isError === true
        ? { message: text }
        : content?.message === undefined
          ? {}
          : { message: content.message }),
    };
  });
}
