/**
 * Graph's calendars and account as Calgate carries them: a calendar's role and colour, and the
 * account's address and zone (calendars carry none; the mailbox's is theirs).
 */
import type { CalendarInfo } from '../types.ts';
import type { GraphCalendar, GraphCalendarColor, GraphMailboxSettings, GraphUser } from './graph-types.ts';
import { present, text } from './graph-values.ts';
import { ianaZoneFor } from './zones.ts';

/** Outlook's preset calendar colours (the `color` names), for calendars without a `hexColor`. */
const PRESET_COLORS: Partial<Record<GraphCalendarColor, string>> = {
  lightBlue: '#a6d1f5',
  lightGreen: '#87d28e',
  lightOrange: '#fcab73',
  lightGray: '#c0c0c0',
  lightYellow: '#f4d07a',
  lightTeal: '#6cd6dd',
  lightPink: '#f8a1d2',
  lightBrown: '#cda66a',
  lightRed: '#f88c9b',
};

/** The account's address: `/me.mail`, else its `userPrincipalName` (accounts without a mailbox address). */
export function accountEmailOf(user: GraphUser): string | undefined {
  return text(user.mail?.trim()) ?? text(user.userPrincipalName?.trim());
}

/** The account's zone from `/me/mailboxSettings` (calendars carry none); UTC when it has none Calgate can read. */
export function mailboxZoneOf(settings: GraphMailboxSettings | null | undefined): string {
  const zone = settings?.timeZone ? ianaZoneFor(settings.timeZone) : undefined;
  return zone?.ok ? zone.value : 'UTC';
}

/** A calendar's role for Calgate: `canEdit: false` is read-only whatever the key's grant says. */
function accessRoleOf(calendar: GraphCalendar, accountEmail: string | undefined): CalendarInfo['accessRole'] {
  if (calendar.canEdit !== true) {
    return 'reader';
  }
  const owner = calendar.owner?.address?.toLowerCase();
  return owner === undefined || accountEmail === undefined || owner === accountEmail.toLowerCase()
    ? 'owner'
    : 'writer';
}

/** A calendar as discovered on a Microsoft connection, with Outlook's colour when it has one. */
export interface MicrosoftCalendarInfo extends CalendarInfo {
  backgroundColor?: string;
}

export function toCalendarInfo(
  calendar: GraphCalendar,
  mailboxZone: string,
  accountEmail: string | undefined,
): MicrosoftCalendarInfo {
  const info: MicrosoftCalendarInfo = {
    externalId: calendar.id ?? '',
    summary: text(calendar.name) ?? calendar.id ?? '',
    timeZone: mailboxZone,
    primary: calendar.isDefaultCalendar === true,
    accessRole: accessRoleOf(calendar, accountEmail),
  };
  const hex = text(calendar.hexColor);
  const color = hex ?? (present(calendar.color) ? PRESET_COLORS[calendar.color] : undefined);
  if (color !== undefined) {
    info.backgroundColor = color.toLowerCase();
  }
  return info;
}
