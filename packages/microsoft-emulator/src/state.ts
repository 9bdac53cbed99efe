/**
 * Everything the emulator holds: users (mailboxes), their calendars and events, OAuth clients,
 * codes and tokens, delta sync states, and the clock.
 */
import { randomBytes } from 'node:crypto';
import type { PatternedRecurrence } from './recurrence.ts';
import type { LocalParts } from './time.ts';

export interface Zone {
  /** As given (Windows or IANA name). */
  name: string;
  iana: string;
}

export interface UserRecord {
  id: string;
  /** `/me.mail`; null for accounts without a mailbox address. */
  mail: string | null;
  userPrincipalName: string;
  displayName: string;
  accountType: 'work' | 'personal';
  /** mailboxSettings.timeZone (Windows name). */
  timeZone: string;
  /** Outlook's "Save declined events": a declined invitation stays, shown as free. */
  preserveDeclinedMeetings: boolean;
}

export interface EmailAddress {
  name: string;
  address: string;
}

export interface Attendee {
  emailAddress: EmailAddress;
  type: 'required' | 'optional' | 'resource';
  status: { response: string; time: string };
}

export interface WhenRecord {
  local: LocalParts;
  zone: Zone;
}

/** A stored event: a single event, a series master, or an exception (a changed occurrence). */
export interface EventRecord {
  id: string;
  calendarId: string;
  kind: 'singleInstance' | 'seriesMaster' | 'exception';
  subject: string;
  body: { contentType: 'text' | 'html'; content: string };
  start: WhenRecord;
  end: WhenRecord;
  isAllDay: boolean;
  location: string;
  attendees: Attendee[];
  organizer: EmailAddress;
  showAs: string;
  sensitivity: string;
  importance: string;
  categories: string[];
  isCancelled: boolean;
  isReminderOn: boolean;
  reminderMinutesBeforeStart: number;
  response: string;
  responseTime: string;
  recurrence?: PatternedRecurrence;
  /** Exceptions: their series and the occurrence's original start (epoch ms). */
  seriesMasterId?: string;
  originalStart?: number;
  /** Masters: original starts of deleted occurrences. */
  deleted?: Set<number>;
  transactionId?: string;
  /** Single-value extended properties by id as Graph answers it (see extended.ts). */
  extended?: Record<string, string>;
  iCalUId: string;
  created: number;
  modified: number;
  changeKey: string;
}

export interface CalendarRecord {
  id: string;
  /** The mailbox whose `/me/calendars` lists it. */
  mailbox: string;
  name: string;
  color: string;
  hexColor: string;
  isDefaultCalendar: boolean;
  canEdit: boolean;
  owner: EmailAddress;
  changeKey: string;
  events: Map<string, EventRecord>;
}

export interface ClientRecord {
  clientId: string;
  /** Unset: a public client (PKCE, no secret). */
  clientSecret?: string;
  redirectUris: string[];
}

export interface CodeRecord {
  code: string;
  clientId: string;
  email: string;
  scopes: string[];
  redirectUri: string;
  challenge?: string;
  challengeMethod?: string;
  expiresAt: number;
  used: boolean;
}

export interface TokenRecord {
  token: string;
  email: string;
  clientId: string;
  scopes: string[];
  expiresAt: number;
}

/** What one delta round saw: the instance ids with their change keys, in the window asked for. */
export interface DeltaState {
  calendarId: string;
  mailbox: string;
  window: [number, number];
  seen: Map<string, string>;
  /** Pages not yet fetched (skip tokens), then the delta token that ends the round. */
  pages?: { items: unknown[] }[];
}

export interface Clock {
  now(): number;
}

/** A long, opaque, case-sensitive id in Graph's alphabet. */
export function graphId(prefix = 'AAMkA'): string {
  return `${prefix}${randomBytes(96).toString('base64url')}AAA=`;
}

export function changeKey(): string {
  return randomBytes(12).toString('base64');
}

export class MicrosoftState {
  readonly users = new Map<string, UserRecord>();
  readonly calendars = new Map<string, CalendarRecord>();
  readonly clients = new Map<string, ClientRecord>();
  readonly codes = new Map<string, CodeRecord>();
  readonly access = new Map<string, TokenRecord>();
  readonly refresh = new Map<string, TokenRecord>();
  readonly delta = new Map<string, DeltaState>();
  /** Transaction ids already used per calendar → the event they created. */
  readonly transactions = new Map<string, string>();
  tenantId = '72f988bf-86f1-41af-91ab-2d7cd011db47';
  #offset = 0;
  readonly #clock: Clock;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  now(): number {
    return this.#clock.now() + this.#offset;
  }

  advanceClock(ms: number): void {
    this.#offset += ms;
  }

  clear(): void {
    for (const map of [
      this.users,
      this.calendars,
      this.clients,
      this.codes,
      this.access,
      this.refresh,
      this.delta,
      this.transactions,
    ]) {
      map.clear();
    }
    this.#offset = 0;
  }

  /** The user by mail or userPrincipalName (case-insensitive, as Exchange compares addresses). */
  user(address: string): UserRecord | undefined {
    const wanted = address.toLowerCase();
    for (const [key, user] of this.users) {
      if (
        key === wanted ||
        user.userPrincipalName.toLowerCase() === wanted ||
        user.mail?.toLowerCase() === wanted
      ) {
        return user;
      }
    }
    return undefined;
  }

  calendarsOf(mailbox: string): CalendarRecord[] {
    return [...this.calendars.values()].filter((c) => c.mailbox === mailbox);
  }

  defaultCalendar(mailbox: string): CalendarRecord | undefined {
    return this.calendarsOf(mailbox).find((c) => c.isDefaultCalendar);
  }

  /** The stored event with this id in any of the mailbox's calendars. */
  findEvent(mailbox: string, id: string): { calendar: CalendarRecord; event: EventRecord } | undefined {
    for (const calendar of this.calendarsOf(mailbox)) {
      const event = calendar.events.get(id);
      if (event) {
        return { calendar, event };
      }
    }
    return undefined;
  }
}
