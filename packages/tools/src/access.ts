import { CalgateError } from '@calgate/core';
import type { CalendarProvider, CalendarRef, ProviderKind } from '@calgate/providers';
import { distance } from './validation.ts';

/** A calendar as one API key sees it, with that key's grant. */
export interface KeyCalendar {
  id: string;
  externalId: string;
  summary: string;
  timeZone: string;
  primary: boolean;
  enabled: boolean;
  accessRole: string;
  connectionId: string;
  provider: ProviderKind;
  auth: 'oauth' | 'service_account' | 'none' | 'password';
  accountEmail: string;
  connectionStatus: 'active' | 'needs_reauth' | 'disabled';
  canRead: boolean;
  canWrite: boolean;
}

/** Who is calling: one API key of one tenant and the calendars it holds grants on. */
export interface Principal {
  tenantId: string;
  keyId: string;
  calendars: readonly KeyCalendar[];
  /** The key's default calendar (what `primary` and an omitted calendarId mean), when set. */
  defaultCalendarId?: string | null | undefined;
  /** The key's own time zone (IANA), when set; else the workspace's, else its default calendar's. */
  timeZone?: string | null | undefined;
  /** The workspace's (tenant's) time zone, when set: what a key without its own zone answers in. */
  workspaceTimeZone?: string | null | undefined;
  /** The toolsets the key has switched on; absent, every toolset (in-process servers and tests). */
  toolsets?: readonly string[] | undefined;
  /** A connected app (approved through OAuth consent) rather than an API key; absent, a key. */
  app?: boolean | undefined;
  /**
   * The tenant's own addresses (connected accounts, users): events organised by anyone else are
   * marked `organizerOutside`. Absent, no event is marked.
   */
  tenantAddresses?: readonly string[] | undefined;
  /** What risky actions need after the agent was shown suspicious content (guard/confirm.ts); absent, `ask`. */
  hijackPolicy?: 'strict' | 'ask' | 'off' | undefined;
}

/** Finds the provider behind a calendar's connection (of the given tenant). */
export type ProviderResolver = (calendar: KeyCalendar, tenantId: string) => CalendarProvider;

/**
 * Whether Calgate itself may only read the calendar: a Google account connected through OAuth
 * stores the role it may use, capped to `reader` when its consent granted no write scope. (A
 * calendar shared with the account as reader reads the same; the message covers both.)
 */
export function readOnlyForCalgate(calendar: KeyCalendar): boolean {
  return (
    (calendar.provider === 'google' || calendar.provider === 'microsoft') &&
    calendar.auth === 'oauth' &&
    calendar.accessRole === 'reader'
  );
}

/**
 * A calendar its server lets the account only read (CalDAV privileges), or a subscribed feed:
 * never written, whatever the grant.
 */
export function readOnlyUpstream(calendar: KeyCalendar): boolean {
  return calendar.provider === 'ics' || (calendar.provider === 'caldav' && calendar.accessRole === 'reader');
}

/**
 * Why a calendar the key reads cannot be written: where Calgate has only read access, ticking
 * Write would not help (the dashboard does not even offer it), so the message names the account
 * and the upgrade instead.
 */
export function notWritableMessage(calendar: KeyCalendar, asked: string): string {
  if (readOnlyUpstream(calendar)) {
    return `The CalDAV server lets ${calendar.accountEmail} only read calendar '${asked}', so it cannot be written whatever this key's grant; its owner must share it with write access.`;
  }
  if (readOnlyForCalgate(calendar)) {
    return `Calgate has read-only access to ${calendar.accountEmail}, so calendar '${asked}' cannot be written; upgrade it on the Accounts page (Allow writing for ${calendar.accountEmail}). If the calendar is only shared with that account to read, its owner must share it with write access.`;
  }
  return `This API key may read but not write calendar '${asked}'. Ask its owner to tick Write for this key in the dashboard.`;
}

/** A calendar the key may use for the requested purpose, with the provider to reach it. */
export interface CalendarHandle {
  calendar: KeyCalendar;
  ref: CalendarRef;
  provider: CalendarProvider;
}

/**
 * The only way a tool reaches a calendar. Every method checks the key's grant first; a calendar
 * the key may not read is reported exactly like one that does not exist. Calendars touched are
 * remembered for the audit log.
 */
export class CalendarAccess {
  readonly #principal: Principal;
  readonly #providers: ProviderResolver;
  readonly touched = new Set<string>();
  /** The key's zone as set during this request (set_time_zone), ahead of the loaded one. */
  #timeZoneSet: string | undefined;

  constructor(principal: Principal, providers: ProviderResolver) {
    this.#principal = principal;
    this.#providers = providers;
  }

  get principal(): Principal {
    return this.#principal;
  }

  /** Calendars the key holds any grant on, in a stable order. */
  list(): readonly KeyCalendar[] {
    return this.#principal.calendars;
  }

  /**
   * The key's default calendar: the one set for the key when it can still be read, else the
   * primary calendar of its first-connected account, else its first readable calendar.
   */
  defaultCalendar(): KeyCalendar | undefined {
    const readable = this.#principal.calendars.filter((calendar) => calendar.canRead);
    const chosen = this.#principal.defaultCalendarId;
    return (
      readable.find((calendar) => calendar.id === chosen) ??
      readable.find((calendar) => calendar.primary) ??
      readable[0]
    );
  }

  /** The key's time zone: its own, else the workspace's, else its default calendar's, else UTC. */
  timeZone(): string {
    return this.personZone() ?? this.defaultCalendar()?.timeZone ?? 'UTC';
  }

  /**
   * The person's zone, when known: the key's own (as set during this request by set_time_zone,
   * else as loaded), else the workspace's.
   */
  personZone(): string | undefined {
    return this.#timeZoneSet ?? this.#principal.timeZone ?? this.#principal.workspaceTimeZone ?? undefined;
  }

  /** The key's own zone changed during this request: its later calls (in a batch) read it. */
  timeZoneChanged(zone: string): void {
    this.#timeZoneSet = zone;
  }

  /**
   * The zone a call reads local times in and writes its answer in: the request's `timeZone`, else
   * the person's (the key's own, e.g. set by set_time_zone, else the workspace's), else the zone
   * the calendars the request is about share, else the key's default calendar's.
   */
  zoneFor(requestTimeZone: string | undefined, calendars: readonly KeyCalendar[] = []): string {
    if (requestTimeZone !== undefined) {
      return requestTimeZone;
    }
    const person = this.personZone();
    if (person !== undefined) {
      return person;
    }
    const [only, ...rest] = calendars;
    if (only !== undefined && rest.every((calendar) => calendar.timeZone === only.timeZone)) {
      return only.timeZone;
    }
    return this.timeZone();
  }

  hasWritable(): boolean {
    return this.#principal.calendars.some((calendar) => calendar.canWrite && calendar.enabled);
  }

  /**
   * Every enabled calendar the key may read. Calendars whose account cannot be used right now
   * (e.g. it needs to be reconnected) are returned apart with the reason, so a fan-out can report
   * them instead of failing as a whole.
   */
  allReadable(): { handles: CalendarHandle[]; unavailable: { calendarId: string; error: CalgateError }[] } {
    const handles: CalendarHandle[] = [];
    const unavailable: { calendarId: string; error: CalgateError }[] = [];
    for (const calendar of this.#principal.calendars) {
      if (!calendar.canRead || !calendar.enabled) {
        continue;
      }
      try {
        handles.push(this.#handle(calendar));
      } catch (error) {
        if (!(error instanceof CalgateError)) {
          throw error;
        }
        unavailable.push({ calendarId: calendar.id, error });
      }
    }
    return { handles, unavailable };
  }

  readable(calendarId: string): CalendarHandle {
    return this.#handle(this.#resolve(calendarId));
  }

  writable(calendarId: string): CalendarHandle {
    const calendar = this.#resolve(calendarId);
    if (calendar.provider === 'ics') {
      // A subscribed feed is read-only whatever the grant: the next refresh would undo a write.
      throw new CalgateError(
        'permission_denied',
        `Calendar '${calendar.summary}' (${calendar.id}) is a subscribed iCalendar feed and cannot be changed through Calgate; change it where the feed is published.`,
        { context: { calendarId: calendar.id } },
      );
    }
    if (!calendar.canWrite || readOnlyUpstream(calendar)) {
      throw new CalgateError('permission_denied', notWritableMessage(calendar, calendarId), {
        context: { calendarId: calendar.id },
      });
    }
    return this.#handle(calendar);
  }

  #resolve(calendarId: string): KeyCalendar {
    const readable = this.#principal.calendars.filter((calendar) => calendar.canRead);
    const matches = matchCalendars(readable, calendarId, () => this.defaultCalendar());
    const [first, ...rest] = matches;
    if (first === undefined) {
      throw new CalgateError('not_found', notFoundMessage(readable, calendarId), { context: { calendarId } });
    }
    if (rest.length > 0) {
      const choices = matches
        .map((calendar) => `${calendar.id} ('${calendar.summary}', ${calendar.accountEmail})`)
        .join(', ');
      throw new CalgateError(
        'invalid_argument',
        `Calendar '${calendarId}' is ambiguous for this key; use one of: ${choices}.`,
      );
    }
    if (!first.enabled) {
      throw new CalgateError('permission_denied', `Calendar '${calendarId}' is disabled in Calgate.`, {
        context: { calendarId: first.id },
      });
    }
    return first;
  }

  #handle(calendar: KeyCalendar): CalendarHandle {
    if (calendar.connectionStatus === 'needs_reauth') {
      throw new CalgateError(
        'needs_reauth',
        `The account ${calendar.accountEmail} must be reconnected in the Calgate dashboard before calendar '${calendar.summary}' can be used.`,
        { context: { calendarId: calendar.id, connectionId: calendar.connectionId } },
      );
    }
    if (calendar.connectionStatus === 'disabled') {
      throw new CalgateError(
        'permission_denied',
        `The account ${calendar.accountEmail} is disabled in Calgate.`,
        {
          context: { calendarId: calendar.id },
        },
      );
    }
    this.touched.add(calendar.id);
    return {
      calendar,
      ref: { id: calendar.id, externalId: calendar.externalId, timeZone: calendar.timeZone },
      provider: this.#providers(calendar, this.#principal.tenantId),
    };
  }
}

/** Folded for comparing names: case, accents and surrounding space do not matter. */
function fold(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().trim();
}

/**
 * The calendars an id names: a Calgate id, `primary` (the key's default calendar), an upstream
 * id (Google's email-like id), or else an exact calendar name, compared case-insensitively.
 */
function matchCalendars(
  readable: readonly KeyCalendar[],
  calendarId: string,
  defaultCalendar: () => KeyCalendar | undefined,
): KeyCalendar[] {
  const byId = readable.find((calendar) => calendar.id === calendarId);
  if (byId !== undefined) {
    return [byId];
  }
  if (calendarId === 'primary') {
    const chosen = defaultCalendar();
    return chosen === undefined ? [] : [chosen];
  }
  const upstream = readable.filter((calendar) => calendar.externalId === calendarId);
  if (upstream.length > 0) {
    return upstream;
  }
  const name = fold(calendarId);
  return name === '' ? [] : readable.filter((calendar) => fold(calendar.summary) === name);
}

/** "Not found", with the closest calendar names when the text looks like a name. */
function notFoundMessage(readable: readonly KeyCalendar[], calendarId: string): string {
  const base = `Calendar '${calendarId}' was not found.`;
  const wanted = fold(calendarId);
  // Ids (cal_…, email-like upstream ids) are not names: no guessing there.
  if (/^cal_|@/.test(calendarId) || wanted.length < 2) {
    return `${base} Call list_calendars for the calendars this key can use.`;
  }
  const scored = readable
    .map((calendar) => {
      const name = fold(calendar.summary);
      const contains = name.includes(wanted) || (name.length >= 3 && wanted.includes(name));
      return { calendar, score: contains ? 0 : distance(wanted, name) };
    })
    .filter(({ score }) => score <= Math.max(2, Math.floor(wanted.length / 3)))
    .sort((a, b) => a.score - b.score)
    .slice(0, 3);
  const hint =
    scored.length === 0
      ? ''
      : ` Did you mean ${scored.map(({ calendar }) => `'${calendar.summary}' (${calendar.id})`).join(' or ')}?`;
  return `${base}${hint} Call list_calendars for the calendars this key can use.`;
}
