/**
 * Notification channels on calendars' event collections (events.watch). A channel gets a
 * `sync` message as soon as it is opened, then an `exists` message whenever an event of its
 * calendar changes, and a final `not_exists` if the calendar is deleted. Messages go out in
 * order per channel, off the API call's path; expired channels fall silent and are dropped.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Faults } from '../faults.ts';
import type { EmulatorState } from '../state.ts';
import {
  type DeliveryRecord,
  deliver,
  type Notification,
  type ResourceState,
  type RetryPolicy,
} from './delivery.ts';

export interface Channel {
  id: string;
  calendarId: string;
  /** The principal that opened it; only they may stop it. */
  owner: string;
  address: string;
  token?: string;
  expiration: number;
  resourceId: string;
  resourceUri: string;
  /** The last message number used. */
  messageNumber: number;
  live: boolean;
  /** Serialises deliveries so a receiver sees message numbers in order. */
  queue: Promise<void>;
}

/** What admin.channels() shows (no token: the channel token is the receiver's secret). */
export interface ChannelInfo {
  id: string;
  calendarId: string;
  address: string;
  resourceId: string;
  expiration: number;
  messageNumber: number;
}

const DELIVERY_LOG_LIMIT = 5_000;

/** Google's resourceId is opaque and the same for every channel on one resource. */
export function resourceIdOf(calendarId: string): string {
  return createHash('sha256').update(`events:${calendarId}`).digest('base64url').slice(0, 27);
}

export class ChannelRegistry {
  readonly #channels = new Map<string, Channel>();
  readonly #pending = new Set<string>();
  readonly #log: DeliveryRecord[] = [];
  readonly #inflight = new Set<Promise<void>>();
  readonly #state: EmulatorState;
  readonly #faults: Faults;
  readonly #retry: RetryPolicy;

  constructor(state: EmulatorState, faults: Faults, retry: RetryPolicy) {
    this.#state = state;
    this.#faults = faults;
    this.#retry = retry;
    state.onCalendarChange((calendarId) => this.#changed(calendarId));
  }

  has(id: string): boolean {
    return this.#channels.has(id);
  }

  get(id: string): Channel | undefined {
    this.#expire();
    return this.#channels.get(id);
  }

  /** Registers a channel and queues its `sync` message. */
  open(channel: Omit<Channel, 'messageNumber' | 'live' | 'queue'>): Channel {
    const record: Channel = { ...channel, messageNumber: 0, live: true, queue: Promise.resolve() };
    this.#channels.set(record.id, record);
    this.#send(record, 'sync');
    return record;
  }

  stop(id: string): void {
    const channel = this.#channels.get(id);
    if (channel) {
      channel.live = false;
      this.#channels.delete(id);
    }
  }

  /** Stops every channel (reset, close); in-flight retries give up at their next attempt. */
  clear(): void {
    for (const id of [...this.#channels.keys()]) {
      this.stop(id);
    }
    this.#pending.clear();
    this.#log.length = 0;
  }

  list(): ChannelInfo[] {
    this.#expire();
    return [...this.#channels.values()].map((c) => ({
      id: c.id,
      calendarId: c.calendarId,
      address: c.address,
      resourceId: c.resourceId,
      expiration: c.expiration,
      messageNumber: c.messageNumber,
    }));
  }

  deliveries(): DeliveryRecord[] {
    return [...this.#log];
  }

  /** Resolves once every queued message has been delivered, dropped or given up. */
  async idle(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    while (this.#inflight.size > 0) {
      await Promise.all([...this.#inflight]);
    }
  }

  /**
   * Several events can change in one call (a series edit, a move touches two calendars):
   * changes within one tick make one message per channel, as Google coalesces them too.
   */
  #changed(calendarId: string): void {
    if (this.#pending.size === 0) {
      setImmediate(() => this.#flush());
    }
    this.#pending.add(calendarId);
  }

  #flush(): void {
    const calendars = [...this.#pending];
    this.#pending.clear();
    this.#expire();
    for (const calendarId of calendars) {
      const gone = !this.#state.calendars.has(calendarId);
      for (const channel of [...this.#channels.values()]) {
        if (channel.calendarId !== calendarId) {
          continue;
        }
        this.#send(channel, gone ? 'not_exists' : 'exists');
        if (gone) {
          // The resource is gone: nothing more will come on this channel.
          this.#channels.delete(channel.id);
        }
      }
    }
  }

  #expire(): void {
    const now = this.#state.now();
    for (const channel of [...this.#channels.values()]) {
      if (channel.expiration <= now) {
        this.stop(channel.id);
      }
    }
  }

  #send(channel: Channel, state: ResourceState): void {
    channel.messageNumber += 1;
    const notification: Notification = {
      channelId: channel.id,
      calendarId: channel.calendarId,
      address: channel.address,
      expiration: channel.expiration,
      resourceId: channel.resourceId,
      resourceUri: channel.resourceUri,
      state,
      messageNumber: channel.messageNumber,
      ...(channel.token === undefined ? {} : { token: channel.token }),
    };
    // Decided now, in message order, so `times` counts messages rather than attempts.
    const fault = this.#faults.decideNotification({ calendarId: channel.calendarId, channelId: channel.id });
    const live = () => channel.live && channel.expiration > this.#state.now();
    channel.queue = channel.queue.then(async () => {
      const base = {
        channelId: channel.id,
        calendarId: channel.calendarId,
        messageNumber: notification.messageNumber,
        state,
      };
      if (fault?.kind === 'drop') {
        this.#record({ ...base, outcome: 'dropped', attempts: 0 });
        return;
      }
      if (fault?.kind === 'delay') {
        await sleep(fault.ms, undefined, { ref: false });
      }
      this.#record({ ...base, ...(await deliver(notification, this.#retry, live)) });
    });
    const queued = channel.queue;
    this.#inflight.add(queued);
    void queued.finally(() => this.#inflight.delete(queued));
  }

  #record(entry: DeliveryRecord): void {
    this.#log.push(entry);
    if (this.#log.length > DELIVERY_LOG_LIMIT) {
      this.#log.splice(0, this.#log.length - DELIVERY_LOG_LIMIT);
    }
  }
}
