/**
 * The Outlook account behind a provider: who it is, the mailbox's zone (or the fallback when
 * mailboxSettings cannot be read), its calendars, and new calendars made on it.
 */
import { CalgateError, isCalgateError } from '@calgate/core';
import type { CalendarInfo, NewCalendar } from '../types.ts';
import type { GraphClient } from './client.ts';
import type { GraphCalendar, GraphMailboxSettings, GraphUser } from './graph-types.ts';
import { accountEmailOf, type MicrosoftCalendarInfo, mailboxZoneOf, toCalendarInfo } from './mapping.ts';
import { windowsZoneFor } from './zones.ts';

/** The zone calendars get when `/me/mailboxSettings` cannot be read. */
export type FallbackZone = () => Promise<string | null | undefined>;

/** What discovery found on the account: who it is, its zone, and its calendars. */
export interface MicrosoftAccount {
  email: string;
  displayName?: string;
  /** The mailbox's zone (IANA), or the fallback when mailboxSettings was refused. */
  timeZone: string;
  /** Whether the zone came from mailboxSettings (false: the fallback, e.g. no MailboxSettings.Read). */
  zoneFromMailbox: boolean;
  calendars: MicrosoftCalendarInfo[];
}

/** A new calendar on the account (POST /me/calendars); it lives in the mailbox's zone. */
export async function createCalendar(
  client: GraphClient,
  account: string | undefined,
  fallbackZone: FallbackZone,
  input: NewCalendar,
): Promise<CalendarInfo> {
  if (input.description !== undefined && input.description !== '') {
    throw new CalgateError(
      'invalid_argument',
      'Outlook calendars have no description; leave description out to create one on an Outlook account.',
    );
  }
  if (input.timeZone !== undefined) {
    const windows = windowsZoneFor(input.timeZone);
    if (!windows.ok) {
      throw windows.error;
    }
  }
  const created = await client.request<GraphCalendar>({
    method: 'POST',
    path: '/me/calendars',
    body: { name: input.summary },
    operation: 'calendars.insert',
  });
  const zone = input.timeZone ?? (await accountZone(client, fallbackZone)).timeZone;
  return toCalendarInfo({ ...created, canEdit: true }, zone, account);
}

/** The mailbox's zone from /me/mailboxSettings; refused (no MailboxSettings.Read), the fallback. */
export async function accountZone(
  client: GraphClient,
  fallbackZone: FallbackZone,
  signal?: AbortSignal,
): Promise<{ timeZone: string; fromMailbox: boolean }> {
  try {
    const settings = await client.request<GraphMailboxSettings>({
      path: '/me/mailboxSettings',
      operation: 'mailboxSettings.get',
      ...(signal === undefined ? {} : { signal }),
    });
    return settings?.timeZone
      ? { timeZone: mailboxZoneOf(settings), fromMailbox: true }
      : { timeZone: (await fallbackZone()) || 'UTC', fromMailbox: false };
  } catch (error) {
    // Calgate asks only for Calendars.* and User.Read: reading mailbox settings is usually refused.
    if (isCalgateError(error) && (error.code === 'permission_denied' || error.code === 'not_found')) {
      return { timeZone: (await fallbackZone()) || 'UTC', fromMailbox: false };
    }
    throw error;
  }
}

/** Who the account is (`/me.mail`, else its userPrincipalName), its zone and its calendars. */
export async function discover(
  client: GraphClient,
  account: string | undefined,
  fallbackZone: FallbackZone,
  signal?: AbortSignal,
): Promise<MicrosoftAccount> {
  const me = await client.request<GraphUser>({
    path: '/me',
    operation: 'me.get',
    ...(signal === undefined ? {} : { signal }),
  });
  const email = accountEmailOf(me);
  if (email === undefined) {
    throw new CalgateError(
      'upstream_unavailable',
      'Microsoft Graph answered /me without a mail address or user principal name.',
    );
  }
  const zone = await accountZone(client, fallbackZone, signal);
  const calendars = await listCalendars(client, account, fallbackZone, zone.timeZone, email, signal);
  return {
    email: email.toLowerCase(),
    ...(me.displayName ? { displayName: me.displayName } : {}),
    timeZone: zone.timeZone,
    zoneFromMailbox: zone.fromMailbox,
    calendars,
  };
}

/** Every calendar of the account (all pages): `canEdit: false` is read-only. */
export async function listCalendars(
  client: GraphClient,
  account: string | undefined,
  fallbackZone: FallbackZone,
  zone?: string,
  accountEmail?: string,
  signal?: AbortSignal,
): Promise<MicrosoftCalendarInfo[]> {
  const timeZone = zone ?? (await accountZone(client, fallbackZone, signal)).timeZone;
  const calendars = await client.all<GraphCalendar>({
    path: '/me/calendars',
    query: { $top: 100 },
    operation: 'calendars.list',
    ...(signal === undefined ? {} : { signal }),
  });
  return calendars
    .filter((calendar) => typeof calendar.id === 'string' && calendar.id !== '')
    .map((calendar) => toCalendarInfo(calendar, timeZone, accountEmail ?? account));
}
