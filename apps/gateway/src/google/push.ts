/**
 * POST /api/google/push: Google's notifications for mirrored calendars' channels. The only
 * credential is the channel token, an HMAC of the channel id (mirror/channels.ts), checked in
 * constant time before anything is read. Message numbers only go up per channel, so a replay or a retried
 * duplicate is answered 200 and ignored. `exists` marks the calendar pushed and hands it to
 * `onChange` (the sync job's enqueue); `not_exists` drops the channel. Answers stay fast and
 * empty: Google retries 5xx, and a refused notification tells a prober nothing.
 *
 * Google sends `sync` as soon as it has opened a channel, which can be before the gateway that
 * asked has stored the channel (mirror/channels.ts stores it when Google's answer arrives). The
 * `sync` of a channel the token proves this deployment made is therefore held, briefly, until the
 * channel is stored before it is answered as unknown.
 */
import { GOOGLE_PUSH_PATH } from '@calgate/providers';
import type { MirrorChannelRepository } from '@calgate/store';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ChannelTokens } from '../mirror/channels.ts';

/** Where Google sends notifications, under PUBLIC_URL (the Google sync source's push path). */
export const PUSH_PATH = GOOGLE_PUSH_PATH;

export interface MirrorPushDeps {
  channels: MirrorChannelRepository;
  tokens: ChannelTokens;
  /** Called once per accepted `exists`: the calendar changed upstream and should be synced. */
  onChange(tenantId: string, calendarId: string): void | Promise<void>;
  now?: () => number;
  /** STORE_WAIT_MS unless given (tests). */
  storeWaitMs?: number;
}

const MESSAGE_NUMBER = /^[1-9][0-9]{0,17}$/;
/** How long a notification for a channel not stored yet waits for it, and how often it looks. */
const STORE_WAIT_MS = 3_000;
const STORE_POLL_MS = 50;

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export function registerMirrorPush(app: FastifyInstance, deps: MirrorPushDeps): void {
  const now = deps.now ?? Date.now;
  app.post(PUSH_PATH, async (request: FastifyRequest, reply: FastifyReply) => {
    const channelId = header(request, 'x-goog-channel-id');
    const token = header(request, 'x-goog-channel-token');
    if (channelId === undefined || token === undefined || !deps.tokens.verify(channelId, token)) {
      return reply.status(401).send();
    }
    const state = header(request, 'x-goog-resource-state');
    const number = header(request, 'x-goog-message-number');
    if (number === undefined || !MESSAGE_NUMBER.test(number)) {
      return reply.status(400).send();
    }
    let outcome = await deps.channels.acceptMessage(channelId, Number(number), now());
    // Only a channel's first message (`sync`) can come before the channel is stored; a channel that
    // was stopped or forgotten is answered 404 at once, however often Google sends to it.
    const waitUntil = state === 'sync' ? Date.now() + (deps.storeWaitMs ?? STORE_WAIT_MS) : 0;
    while (outcome.kind === 'unknown' && Date.now() < waitUntil) {
      await new Promise((resolve) => setTimeout(resolve, STORE_POLL_MS));
      outcome = await deps.channels.acceptMessage(channelId, Number(number), now());
    }
    if (outcome.kind === 'unknown') {
      return reply.status(404).send();
    }
    if (outcome.kind === 'replay') {
      return reply.status(200).send();
    }
    const { tenantId, calendarId } = outcome.channel;
    if (state === 'exists') {
      await deps.channels.markPushed(tenantId, calendarId, now());
      try {
        await deps.onChange(tenantId, calendarId);
      } catch (error) {
        // Polling still catches the change; a 5xx would only make Google send it again.
        request.log.warn({ err: error, channelId, calendarId }, 'mirror push: could not queue a sync');
      }
    } else if (state === 'not_exists') {
      await deps.channels.delete(channelId);
    }
    return reply.status(200).send();
  });
}
