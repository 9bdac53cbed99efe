/** events.watch and channels.stop, with Google's request checks and Channel resource. */
import { type ApiDeps, apiRoute } from '../api.ts';
import { calendarAccess } from '../auth.ts';
import { apiErrors, GoogleApiError } from '../errors.ts';
import { json, noContent, type RequestContext, type Route } from '../http.ts';
import { type ChannelRegistry, resourceIdOf } from './channels.ts';

/** Google's default channel lifetime (params.ttl) and the longest an events channel lives. */
export const DEFAULT_TTL_S = 604_800;
export const MAX_TTL_S = 30 * 86_400;
const ID_PATTERN = /^[A-Za-z0-9\-_+/=]{1,64}$/;
const MAX_TOKEN_LENGTH = 256;

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** An int64 arrives as a JSON number or a decimal string (googleapis sends either). */
function int64(value: unknown, field: string): number | undefined {
  if (value === undefined || value === null || value === '') {
    return undefined;
  }
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n)) {
    throw apiErrors.invalid(`Invalid value for ${field}: ${String(value)}`, field);
  }
  return n;
}

function webhookAddress(value: unknown): string {
  const address = str(value);
  if (address === undefined || address === '') {
    throw apiErrors.required('Required', 'address');
  }
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw apiErrors.badRequest('push.webhookUrlUnparseable', `Unparseable WebHook callback URL: ${address}`);
  }
  // Google insists on https; the emulator also takes http so loopback receivers work.
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw apiErrors.badRequest('push.webhookUrlNotHttps', 'WebHook callback must be HTTPS.');
  }
  return address;
}

/** When the channel ends: the requested expiration, else now + params.ttl, capped either way. */
function expirationOf(body: Record<string, unknown>, now: number): number {
  const params = body.params;
  const ttlRaw =
    params !== null && typeof params === 'object' ? (params as Record<string, unknown>).ttl : undefined;
  const ttl = int64(ttlRaw, 'params.ttl') ?? DEFAULT_TTL_S;
  if (ttl <= 0) {
    throw apiErrors.invalid(`Invalid value for params.ttl: ${ttl}`, 'params.ttl');
  }
  const latest = now + MAX_TTL_S * 1000;
  const requested = int64(body.expiration, 'expiration');
  if (requested !== undefined && requested <= now) {
    throw apiErrors.invalid('Channel expiration must be in the future.', 'expiration');
  }
  return Math.min(requested ?? now + ttl * 1000, latest);
}

function channelFields(ctx: RequestContext): { id: string; token?: string } {
  const id = str(ctx.body.id);
  if (id === undefined || id === '') {
    throw apiErrors.required('Required', 'id');
  }
  if (!ID_PATTERN.test(id)) {
    throw apiErrors.invalid(`Invalid channel id '${id}': use up to 64 of A-Z a-z 0-9 - _ + / =.`, 'id');
  }
  const token = str(ctx.body.token);
  if (token !== undefined && token.length > MAX_TOKEN_LENGTH) {
    throw apiErrors.invalid(`Channel token longer than ${MAX_TOKEN_LENGTH} characters.`, 'token');
  }
  return token === undefined ? { id } : { id, token };
}

export function watchRoutes(deps: ApiDeps, channels: ChannelRegistry): Route[] {
  const { state } = deps;
  return [
    apiRoute(
      deps,
      'POST',
      '/calendars/:calendarId/events/watch',
      'events.watch',
      'eventsRead',
      (ctx, principal) => {
        const { calendar } = calendarAccess(state, principal, ctx.params.calendarId ?? '', 'freeBusyReader');
        const { id, token } = channelFields(ctx);
        const type = str(ctx.body.type);
        if (type !== 'web_hook' && type !== 'webhook') {
          throw type === undefined
            ? apiErrors.required('Required', 'type')
            : apiErrors.invalid(`Unknown channel type: ${type}`, 'type');
        }
        const address = webhookAddress(ctx.body.address);
        if (channels.has(id)) {
          throw apiErrors.badRequest('channelIdNotUnique', `Channel id ${id} not unique`);
        }
        const expiration = expirationOf(ctx.body, state.now());
        const channel = channels.open({
          id,
          calendarId: calendar.id,
          owner: principal.email,
          address,
          expiration,
          resourceId: resourceIdOf(calendar.id),
          resourceUri: `${ctx.baseUrl}/calendar/v3/calendars/${encodeURIComponent(calendar.id)}/events?alt=json`,
          ...(token === undefined ? {} : { token }),
        });
        return json({
          kind: 'api#channel',
          id: channel.id,
          resourceId: channel.resourceId,
          resourceUri: channel.resourceUri,
          ...(channel.token === undefined ? {} : { token: channel.token }),
          // int64 fields travel as strings in Google's JSON.
          expiration: String(channel.expiration),
        });
      },
    ),
    apiRoute(deps, 'POST', '/channels/stop', 'channels.stop', 'any', (ctx, principal) => {
      const id = str(ctx.body.id);
      const resourceId = str(ctx.body.resourceId);
      if (id === undefined || id === '') {
        throw apiErrors.required('Required', 'id');
      }
      const channel = channels.get(id);
      // Another caller's channel, or a resourceId that does not match, is as unknown as a missing one.
      if (
        !channel ||
        channel.owner !== principal.email ||
        (resourceId !== undefined && resourceId !== channel.resourceId)
      ) {
        throw new GoogleApiError(404, 'notFound', `Channel '${id}' not found.`);
      }
      channels.stop(id);
      return noContent();
    }),
  ];
}
