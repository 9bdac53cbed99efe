/**
 * In-memory state: accounts (users and service accounts), OAuth clients, calendars with their
 * events and ACLs, and each principal's calendar list. Every mutation goes through `touch…`
 * helpers so that etags, `updated` and sync sequence numbers stay consistent.
 */

import type { KeyObject } from 'node:crypto';
import { randomBytes } from 'node:crypto';
import { CALENDAR_COLOR_BACKGROUNDS, EVENT_COLOR_BACKGROUNDS } from '@calgate/core';

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

export type AccessRole = 'none' | 'freeBusyReader' | 'reader' | 'writer' | 'owner';

export const ROLE_RANK: Record<AccessRole, number> = {
  none: 0,
  freeBusyReader: 1,
  reader: 2,
  writer: 3,
  owner: 4,
};

export interface UserAccount {
  email: string;
  name: string;
  timeZone: string;
  /** Google's numeric account id (`sub`). */
  id: string;
}

export interface ServiceAccountRecord {
  email: string;
  clientId: string;
  keyId: string;
  publicKey: KeyObject;
  /** Kept when the emulator generated the key, so tests can fetch a key file. */
  privateKeyPem?: string;
  domainWideDelegation: boolean;
}

export interface OAuthClientRecord {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  name: string;
}

export interface EventDateTime {
  date?: string;
  dateTime?: string;
  timeZone?: string;
}

export interface StoredEvent {
  id: string;
  /**
   * Google fields other than kind, etag, id, created and updated. For an exception of a
   * recurring event these are only the fields that differ from the series (plus status).
   */
  data: Record<string, unknown>;
  created: number;
  /** Strictly increasing microseconds: the etag and `updated` derive from it. */
  stamp: number;
  /** The calendar's change sequence at the last change, for sync tokens. */
  modSeq: number;
  /** Creation order within the calendar: the stable default list order. */
  order: number;
  recurringEventId?: string;
  /** For exceptions: the instance key (`20260105T080000Z` or `20260105`). */
  instanceKey?: string;
}

export interface CalendarRecord {
  id: string;
  summary: string;
  description?: string;
  location?: string;
  timeZone: string;
  /** The account or service account that owns the calendar's data. */
  dataOwner: string;
  primary: boolean;
  acl: Map<string, AccessRole>;
  events: Map<string, StoredEvent>;
  /** Change sequence for sync tokens; tokens below `syncFloor` have expired. */
  seq: number;
  syncFloor: number;
  stamp: number;
}

export interface ListEntry {
  calendarId: string;
  hidden: boolean;
  selected: boolean;
  colorId: string;
  backgroundColor: string;
  foregroundColor: string;
  summaryOverride?: string;
  defaultReminders: { method: string; minutes: number }[];
  notificationSettings?: unknown;
  deleted: boolean;
  stamp: number;
  seq: number;
}

export class EmulatorState {
  readonly accounts = new Map<string, UserAccount>();
  readonly serviceAccounts = new Map<string, ServiceAccountRecord>();
  readonly clients = new Map<string, OAuthClientRecord>();
  readonly calendars = new Map<string, CalendarRecord>();
  /** Principal email → calendar id → entry. */
  readonly calendarLists = new Map<string, Map<string, ListEntry>>();
  /** Changes with every reset, so tokens from before a reset are refused. */
  epoch = randomBytes(4).toString('hex');
  listSeq = 0;
  readonly #clock: Clock;
  #offsetMs = 0;
  #lastStamp = 0;
  #order = 0;
  readonly #changeListeners = new Set<(calendarId: string) => void>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  now(): number {
    return this.#clock.now() + this.#offsetMs;
  }

  /** Moves the emulator's clock forward (token expiry, relative quickAdd dates). */
  advanceClock(ms: number): void {
    this.#offsetMs += ms;
  }

  stamp(): number {
    const micros = this.now() * 1000;
    this.#lastStamp = Math.max(micros, this.#lastStamp + 1);
    return this.#lastStamp;
  }

  nextOrder(): number {
    this.#order += 1;
    return this.#order;
  }

  clear(): void {
    this.accounts.clear();
    this.serviceAccounts.clear();
    this.clients.clear();
    this.calendars.clear();
    this.calendarLists.clear();
    this.epoch = randomBytes(4).toString('hex');
  }

  isPrincipal(email: string): boolean {
    return this.accounts.has(email) || this.serviceAccounts.has(email);
  }

  roleOf(calendar: CalendarRecord, email: string): AccessRole {
    if (calendar.dataOwner === email) {
      return 'owner';
    }
    return calendar.acl.get(email) ?? calendar.acl.get('default') ?? 'none';
  }

  listOf(email: string): Map<string, ListEntry> {
    let list = this.calendarLists.get(email);
    if (!list) {
      list = new Map();
      this.calendarLists.set(email, list);
    }
    return list;
  }

  /** Adds (or restores) a calendar on a principal's calendar list. */
  addToList(email: string, calendarId: string, overrides: Partial<ListEntry> = {}): ListEntry {
    const list = this.listOf(email);
    const existing = list.get(calendarId);
    const colorId = existing?.colorId ?? String((list.size % 24) + 1);
    const entry: ListEntry = {
      calendarId,
      hidden: false,
      selected: true,
      colorId,
      backgroundColor: existing?.backgroundColor ?? calendarColor(colorId),
      foregroundColor: existing?.foregroundColor ?? '#000000',
      defaultReminders: existing?.defaultReminders ?? [],
      ...overrides,
      deleted: false,
      stamp: this.stamp(),
      seq: this.bumpListSeq(),
    };
    list.set(calendarId, entry);
    return entry;
  }

  bumpListSeq(): number {
    this.listSeq += 1;
    return this.listSeq;
  }

  touchEntry(entry: ListEntry): void {
    entry.stamp = this.stamp();
    entry.seq = this.bumpListSeq();
  }

  /** Records a change to an event: new etag, `updated`, and a place in the sync sequence. */
  touchEvent(calendar: CalendarRecord, event: StoredEvent): void {
    calendar.seq += 1;
    event.modSeq = calendar.seq;
    event.stamp = this.stamp();
    calendar.stamp = event.stamp;
    this.calendarChanged(calendar.id);
  }

  /**
   * Subscribes to changes of a calendar's events (or the calendar's deletion). Push
   * notifications hang off this, so every path that changes events — API, admin seeding,
   * calendars.clear — notifies watchers without knowing about them.
   */
  onCalendarChange(listener: (calendarId: string) => void): () => void {
    this.#changeListeners.add(listener);
    return () => this.#changeListeners.delete(listener);
  }

  calendarChanged(calendarId: string): void {
    for (const listener of this.#changeListeners) {
      listener(calendarId);
    }
  }
}

/** Google's palettes, by colorId (see the colors endpoint). */
export const CALENDAR_COLORS = CALENDAR_COLOR_BACKGROUNDS;
export const EVENT_COLORS = EVENT_COLOR_BACKGROUNDS;

export function calendarColor(colorId: string): string {
  return CALENDAR_COLORS[Number(colorId) - 1] ?? '#9fc6e7';
}

/** Etags are quoted decimal strings, as Google sends them. */
export const etagOf = (stamp: number): string => `"${stamp}"`;

export const rfc3339Millis = (ms: number): string => new Date(ms).toISOString();
