/**
 * Push channels for mirrored calendars, through the push hooks of the calendar's sync source
 * (Google's events.watch and channels.stop): open with a channel token that is an HMAC of the
 * channel id, renew before the upstream lets a channel lapse, and stop. Push only works when the
 * upstream can reach PUBLIC_URL; `reachable` decides that, and polling of recently used calendars
 * stays the fallback either way. The worker decides when to open, renew and stop
 * (channel-upkeep.ts); a gateway only stops channels, when an account is disconnected.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import type { PushHooks } from '@calgate/providers';
import type { MirrorChannelRepository, MirrorChannelRow, SecretBox } from '@calgate/store';
import type { SyncSources } from './sources.ts';

/** Renew a channel this long before it expires, so no change falls into the gap. */
export const RENEW_AHEAD_MS = 24 * 60 * 60 * 1000;

/** The mirrored calendar a channel watches. */
export interface WatchedCalendar {
  tenantId: string;
  /** Calgate's id (`cal_…`). */
  calendarId: string;
  /** The calendar's id at its provider. */
  externalId: string;
  connectionId: string;
  /** The connection's provider: whose sync source's push hooks open and stop the channel. */
  provider: string;
  /** How the connection signs in; with the two ids, what a sync source for it needs. */
  auth: 'oauth' | 'service_account' | 'password';
}

/**
 * Whether the upstream can deliver to PUBLIC_URL: an https address that is not loopback, or an explicit
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
  /** Sync sources by provider; their push hooks open and stop channels. */
  sources: SyncSources;
  now?: () => number;
}

export class MirrorChannels {
  readonly #publicUrl: string;
  readonly #store: MirrorChannelRepository;
  readonly #tokens: ChannelTokens;
  readonly #sources: SyncSources;
  readonly #now: () => number;

  constructor(options: MirrorChannelsOptions) {
    this.#publicUrl = options.publicUrl.replace(/\/+$/, '');
    this.#store = options.store;
    this.#tokens = options.tokens;
    this.#sources = options.sources;
    this.#now = options.now ?? Date.now;
  }

  /** The push hooks of the calendar's provider, with a source authorised for its connection. */
  async #hooks(calendar: WatchedCalendar): Promise<PushHooks> {
    const source = await this.#sources.forConnection(calendar.provider, calendar);
    if (source.push === undefined) {
      throw new Error(`Calendars of provider '${calendar.provider}' have no push channels.`);
    }
    return source.push;
  }

  /** Opens a channel on the calendar's events and records it (Google sends `sync` at once). */
  async open(calendar: WatchedCalendar): Promise<MirrorChannelRow> {
    const hooks = await this.#hooks(calendar);
    const channelId = randomUUID();
    const { resourceId, expiration } = await hooks.open(calendar, {
      channelId,
      address: `${this.#publicUrl}${hooks.path}`,
      token: this.#tokens.sign(channelId),
    });
    try {
      return await this.#store.insert({
        channelId,
        tenantId: calendar.tenantId,
        calendarId: calendar.calendarId,
        resourceId,
        expiration,
      });
    } catch (error) {
      // The calendar went away meanwhile: do not leave the upstream sending to a channel we forgot.
      await hooks.stop(calendar, { channelId, resourceId }).catch(() => {});
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
   * Stops the channel at the upstream and forgets it. A channel the upstream no longer knows
   * (expired or already stopped) is simply forgotten; other failures are thrown after the row is
   * dropped, since sends to an unknown channel id are refused by the receiver anyway.
   */
  async stop(calendar: WatchedCalendar, channel: MirrorChannelRow): Promise<void> {
    await this.#store.delete(channel.channelId);
    const hooks = await this.#hooks(calendar);
    await hooks.stop(calendar, { channelId: channel.channelId, resourceId: channel.resourceId });
  }
}
