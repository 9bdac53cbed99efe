/**
 * POST /api/microsoft/push: Graph's change notifications for mirrored Outlook calendars. A
 * subscription being created is validated first: Graph posts `?validationToken=…` and expects it
 * back as text within seconds. Notifications carry the subscription's clientState, the channel id
 * and its token (an HMAC of the id, mirror/channels.ts), checked in constant time before anything
 * is read; a known channel's calendar is marked pushed and handed to `onChange` (the sync job's
 * enqueue). Graph wants 202 quickly and retries failures, so answers stay fast and empty.
 */
import { MICROSOFT_PUSH_PATH } from '@calgate/providers';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { MirrorPushDeps } from '../google/push.ts';

const MAX_VALIDATION_TOKEN = 1024;

export function registerMicrosoftPush(app: FastifyInstance, deps: MirrorPushDeps): void {
  const now = deps.now ?? Date.now;
  app.post(MICROSOFT_PUSH_PATH, async (request: FastifyRequest, reply: FastifyReply) => {
    const validation = (request.query as Record<string, unknown>).validationToken;
    if (typeof validation === 'string') {
      if (validation.length > MAX_VALIDATION_TOKEN) {
        return reply.status(400).send();
      }
      return reply.status(200).type('text/plain; charset=utf-8').send(validation);
    }
    const body = request.body as { value?: unknown } | undefined;
    const items = Array.isArray(body?.value) ? (body.value as { clientState?: unknown }[]) : [];
    const calendars = new Map<string, string>();
    let refused = items.length === 0;
    for (const item of items) {
      const state = typeof item?.clientState === 'string' ? item.clientState : '';
      const dot = state.indexOf('.');
      const channelId = state.slice(0, dot);
      const token = state.slice(dot + 1);
      if (dot < 1 || !deps.tokens.verify(channelId, token)) {
        refused = true;
        continue;
      }
      const channel = await deps.channels.get(channelId);
      if (channel !== undefined) {
        calendars.set(channel.calendarId, channel.tenantId);
      }
    }
    if (refused && calendars.size === 0) {
      return reply.status(401).send();
    }
    for (const [calendarId, tenantId] of calendars) {
      await deps.channels.markPushed(tenantId, calendarId, now());
      try {
        await deps.onChange(tenantId, calendarId);
      } catch (error) {
        // Polling still catches the change; a 5xx would only make Graph send it again.
        request.log.warn({ err: error, calendarId }, 'mirror push: could not queue a sync');
      }
    }
    return reply.status(202).send();
  });
}
