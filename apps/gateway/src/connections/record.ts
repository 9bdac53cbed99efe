/**
 * What every connected account does with the calendars it brings, whichever provider it is on:
 * record them (roles capped for read-only connections), grant the new ones to the keys chosen,
 * make the account's primary calendar the default of keys still on none, and queue their mirror
 * syncs. Google's and Microsoft's connect flows share it, so `calgate connect google` and
 * `calgate connect microsoft` answer the same shape.
 */
import type { ApiKeyRepository, CalendarRecord, GrantAccess, TenancyRepository } from '@calgate/store';
import type { Logger } from 'pino';
import type { ConnectionMirror } from '../mirror/lifecycle.ts';

export interface GrantChoice {
  access: GrantAccess;
  /** Keys to grant; empty means every live key of the tenant. */
  keyIds: readonly string[];
}

export interface ConnectResult {
  connectionId: string;
  accountEmail: string;
  reconnected: boolean;
  /** The scopes the provider granted, as stored on the connection (empty when unknown). */
  scopes: string[];
  /** Whether the connection may write at all (see connectionWritable). */
  writable: boolean;
  calendars: { id: string; summary: string; externalId: string; created: boolean }[];
}

/** A calendar as a provider discovered it on a connection. */
export interface DiscoveredCalendar {
  externalId: string;
  summary: string;
  description?: string;
  timeZone: string;
  primary: boolean;
  accessRole: string;
}

/** A calendar's role as Calgate may use it: a read-only connection reads even where the account owns. */
export function cappedRole(accessRole: string, writable: boolean): string {
  return writable || (accessRole !== 'owner' && accessRole !== 'writer') ? accessRole : 'reader';
}

export interface CalendarRecorderDeps {
  tenancy: TenancyRepository;
  keys: ApiKeyRepository;
  log: Logger;
  /** Told the tenant whose calendars or grants changed (its keys' cached lookups are stale). */
  onChange: (tenantId: string) => void;
  mirror?: ConnectionMirror | undefined;
}

export class CalendarRecorder {
  readonly #deps: CalendarRecorderDeps;

  constructor(deps: CalendarRecorderDeps) {
    this.#deps = deps;
  }

  /** Records a connection's calendars and grants the ones new to Calgate as `choice` says. */
  async record(
    tenantId: string,
    connectionId: string,
    discovered: readonly DiscoveredCalendar[],
    choice: GrantChoice,
    writable: boolean,
  ): Promise<ConnectResult['calendars']> {
    const { tenancy, mirror, log } = this.#deps;
    // Capping the role is what keeps Write off a read-only connection's calendars everywhere
    // (matrix, consent, grants): they all read the stored role.
    const visible = discovered
      .filter((calendar) => calendar.accessRole !== 'freeBusyReader')
      .map((calendar) => ({ ...calendar, accessRole: cappedRole(calendar.accessRole, writable) }));
    const { created, calendars } = await tenancy.syncCalendars(tenantId, connectionId, visible);
    const fresh = new Set(created);
    if (choice.access !== 'none') {
      const toGrant: CalendarRecord[] = calendars.filter((calendar) => fresh.has(calendar.id));
      await tenancy.grantCalendars(tenantId, toGrant, choice.access, choice.keyIds);
    }
    await this.#adoptPrimary(tenantId, calendars);
    this.#deps.onChange(tenantId);
    // Gateways only queue: a worker runs the sync (and a failed enqueue is caught by its planner,
    // which syncs never-synced calendars on its next pass).
    await mirror
      ?.calendarsFound(
        tenantId,
        calendars.map((calendar) => ({ id: calendar.id, created: fresh.has(calendar.id) })),
      )
      .catch((error: unknown) => {
        log.warn({ err: error, connectionId }, 'mirror syncs could not be queued; the planner will');
      });
    return calendars.map((calendar) => ({
      id: calendar.id,
      summary: calendar.summary,
      externalId: calendar.externalId,
      created: fresh.has(calendar.id),
    }));
  }

  /**
   * "Add a call at 10:00" must land in a calendar the person sees. Until an account is
   * connected, a first-run key writes to the local calendar Calgate created on first start (the
   * primary calendar of the tenant's local account); once the account's primary calendar is
   * connected, keys that can read it and have no default, or still that first-run calendar, take
   * it as their default. A default a person chose (any other calendar) is left alone. A calendar
   * a service account reaches is shared with it, never its primary, so that path changes nothing.
   */
  async #adoptPrimary(tenantId: string, calendars: readonly CalendarRecord[]): Promise<void> {
    const primary = calendars.find((calendar) => calendar.primary && calendar.enabled);
    if (primary === undefined) {
      return;
    }
    const keyIds = await this.#deps.keys.adoptDefaultCalendar(tenantId, primary.id);
    if (keyIds.length > 0) {
      this.#deps.log.info({ tenantId, calendarId: primary.id, keys: keyIds.length }, 'default calendar set');
    }
  }
}
