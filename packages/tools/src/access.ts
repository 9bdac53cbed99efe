import { CalgateError } from '@calgate/core';
import type { CalendarProvider, CalendarRef } from '@calgate/providers';

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
  provider: 'google' | 'local';
  auth: 'oauth' | 'service_account' | 'none';
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
}

/** Finds the provider behind a calendar's connection (of the given tenant). */
export type ProviderResolver = (calendar: KeyCalendar, tenantId: string) => CalendarProvider;

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
    if (!calendar.canWrite) {
      throw new CalgateError(
        'permission_denied',
        `This API key may read but not write calendar '${calendarId}'. Ask its owner to tick Write for this key in the dashboard.`,
        { context: { calendarId: calendar.id } },
      );
    }
    return this.#handle(calendar);
  }

  #resolve(calendarId: string): KeyCalendar {
    const readable = this.#principal.calendars.filter((calendar) => calendar.canRead);
    const byId = readable.find((calendar) => calendar.id === calendarId);
    // 'primary' is the primary calendar of the key's default account: the first one connected.
    const primary = calendarId === 'primary' ? readable.find((calendar) => calendar.primary) : undefined;
    const matches = byId
      ? [byId]
      : primary
        ? [primary]
        : readable.filter((calendar) => calendar.externalId === calendarId);
    const [first, ...rest] = matches;
    if (first === undefined) {
      throw new CalgateError(
        'not_found',
        `Calendar '${calendarId}' was not found. Call list_calendars for the calendars this key can use.`,
        { context: { calendarId } },
      );
    }
    if (rest.length > 0) {
      const choices = matches.map((calendar) => `${calendar.id} (${calendar.accountEmail})`).join(', ');
      throw new CalgateError(
        'invalid_argument',
        `Calendar '${calendarId}' is ambiguous across this key's accounts; use one of: ${choices}.`,
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
