/**
 * Google push channels for mirrored calendars: open (events.watch) with a channel token that is
 * an HMAC of the channel id, renew before Google lets a channel lapse, and stop (channels.stop).
 * Push only works when Google can reach PUBLIC_URL; `reachable` decides that, and polling of
 * recently used calendars stays the fallback either way. The worker decides when to open, renew
 * and stop (channel-upkeep.ts); a gateway only stops channels, when an account is disconnected.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import type { MirrorChannelRepository, MirrorChannelRow, SecretBox } from '@calgate/store';
import type { calendar_v3 } from '@googleapis/calendar';

/** Where Google sends notifications, under PUBLIC_URL. */
export const PUSH_PATH = '/api/google/push';
/** Renew a channel this long before it expires, so no change falls into the gap. */
export const RENEW_AHEAD_MS = 24 * 60 * 60 * 1000;
/** Google's default and longest lifetime for events channels is 7 days; ask for it explicitly. */
const CHANNEL_TTL_S = 7 * 24 * 60 * 60;

/** The mirrored calendar a channel watches. */
export interface WatchedCalendar {
  tenantId: string;
  /** Calgate's id (`cal_…`). */
  calendarId: string;
  /** Google's calendar id. */
  externalId: string;
  connectionId: string;
  /** How the connection signs in; with the two ids, what mirror/google-client.ts needs for a client. */
  auth: 'oauth' | 'service_account';
}

/** An authed Calendar API client for the calendar's connection (mirror/google-client.ts's). */
export type CalendarClientFor = (calendar: WatchedCalendar) => Promise<calendar_v3.Calendar>;

/**
 * Whether Google can deliver to PUBLIC_URL: an https address that is not loopback, or an explicit
 * MIRROR_PUSH (true forces push on for tests and labs, false turns it off).
 */
export function reachable(publicUrl: string, setting?: boolean): boolean {
  if (setting !== undefined) {
    return setting;
  }
  let url: URL;
  try {
    url = new URL(publicUrl);
  } catch {
    return false;
  }
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const loopback =
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === '::1' ||
    /^127\./.test(host) ||
    host === '0.0.0.0';
  return url.protocol === 'https:' && !loopback;
}

/** Signs and checks channel tokens; the key comes from SecretBox.deriveKey('mirror-channel'). */
export class ChannelTokens {
  readonly #key: Uint8Array;

  constructor(box: Pick<SecretBox, 'deriveKey'>) {
    this.#key = box.deriveKey('mirror-channel');
  }

  sign(channelId: string): string {
    return createHmac('sha256', this.#key).update(channelId).digest('base64url');
  }

  verify(channelId: string, token: string): boolean {
    const expected = Buffer.from(this.sign(channelId));
    const given = Buffer.from(token);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}

export interface MirrorChannelsOptions {
  publicUrl: string;
  store: MirrorChannelRepository;
  tokens: ChannelTokens;
  clientFor: CalendarClientFor;
  now?: () => number;
}

export class MirrorChannels {
  readonly #address: string;
  readonly #store: MirrorChannelRepository;
  readonly #tokens: ChannelTokens;
  readonly #clientFor: CalendarClientFor;
  readonly #now: () => number;

  constructor(options: MirrorChannelsOptions) {
    this.#address = `${options.publicUrl.replace(/\/+$/, '')}${PUSH_PATH}`;
    this.#store = options.store;
    this.#tokens = options.tokens;
    this.#clientFor = options.clientFor;
    this.#now = options.now ?? Date.now;
  }

  /** Opens a channel on the calendar's events and records it; Google sends `sync` at once. */
  async open(calendar: WatchedCalendar): Promise<MirrorChannelRow> {
    const api = await this.#clientFor(calendar);
    const channelId = randomUUID();
    const { data } = await api.events.watch({
      calendarId: calendar.externalId,
      requestBody: {
        id: channelId,
        type: 'web_hook',
        address: this.#address,
        token: this.#tokens.sign(channelId),
        params: { ttl: String(CHANNEL_TTL_S) },
      },
    });
    if (!data.resourceId) {
      throw new Error(`Google opened channel ${channelId} on ${calendar.calendarId} without a resourceId.`);
    }
    const expiration = data.expiration ? Number(data.expiration) : this.#now() + CHANNEL_TTL_S * 1000;
    try {
      return await this.#store.insert({
        channelId,
        tenantId: calendar.tenantId,
        calendarId: calendar.calendarId,
        resourceId: data.resourceId,
        expiration,
      });
    } catch (error) {
      // The calendar went away meanwhile: do not leave Google sending to a channel we forgot.
      await api.channels
        .stop({ requestBody: { id: channelId, resourceId: data.resourceId } })
        .catch(() => {});
      throw error;
    }
  }

  /** Opens the replacement first, then stops the old one, so no change goes unannounced. */
  async renew(calendar: WatchedCalendar, old: MirrorChannelRow): Promise<MirrorChannelRow> {
    const fresh = await this.open(calendar);
    await this.stop(calendar, old);
    return fresh;
  }

  /** Calendars whose channels end within RENEW_AHEAD_MS, for the upkeep job to renew. */
  expiring(limit?: number): Promise<MirrorChannelRow[]> {
    return this.#store.expiringBefore(this.#now() + RENEW_AHEAD_MS, limit);
  }

  /**
   * Stops the channel at Google and forgets it. A channel Google no longer knows (404: expired or
   * already stopped) is simply forgotten; other failures are thrown after the row is dropped,
   * since Google's sends to an unknown channel id are refused by the receiver anyway.
   */
  async stop(calendar: WatchedCalendar, channel: MirrorChannelRow): Promise<void> {
    await this.#store.delete(channel.channelId);
    const api = await this.#clientFor(calendar);
    try {
      await api.channels.stop({ requestBody: { id: channel.channelId, resourceId: channel.resourceId } });
    } catch (error) {
      if (statusOf(error) !== 404) {
        throw error;
      }
    }
  }
}

function statusOf(error: unknown): number | undefined {
  if (error !== null && typeof error === 'object' && 'status' in error && typeof error.status === 'number') {
    return error.status;
  }
  return undefined;
}
