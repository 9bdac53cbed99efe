/**
 * Events as Graph writes them: wall-clock `dateTime` with 7 fractional digits and no offset in
 * the zone the request prefers (else UTC), all-day events as midnight-to-midnight dates, HTML or
 * text bodies as preferred, `@odata.etag` from the change key, `$select` applied.
 */
import { renderExtended } from './extended.ts';
import type { Instance } from './instances.ts';
import type { CalendarRecord, Zone } from './state.ts';
import { isoDate, localAt } from './time.ts';

export interface RenderOptions {
  zone: Zone;
  bodyType?: 'text' | 'html';
  /** The mailbox reading (decides isOrganizer). */
  mailbox: string;
  select?: string[];
  /** Extended property ids `$expand` asked for (see extended.ts). */
  expand?: string[];
}

/** `2026-03-01T09:00:00.0000000Z`: Graph's DateTimeOffset with 7 fractional digits. */
export function offsetTime(ms: number): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 19)}.${iso.slice(20, 23)}0000Z`;
}

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A numeric character reference's character; U+FFFD for one that names no character. */
const fromCode = (code: number): string =>
  Number.isSafeInteger(code) && code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff)
    ? String.fromCodePoint(code)
    : '\ufffd';

export function htmlToText(html: string): string {
  return html
    .replace(/<head[\s\S]*?<\/head>/gi, '')
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(p|div)>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#(\d+);/g, (_, code: string) => fromCode(Number(code)))
    .replace(/&#x([0-9a-f]+);/gi, (_, code: string) => fromCode(Number.parseInt(code, 16)))
    .replace(/&amp;/g, '&')
    .trim();
}

export function bodyAs(body: { contentType: 'text' | 'html'; content: string }, wanted?: 'text' | 'html') {
  const type = wanted ?? 'html';
  if (type === body.contentType) {
    return { contentType: type, content: body.content };
  }
  if (type === 'text') {
    return { contentType: 'text', content: htmlToText(body.content) };
  }
  return {
    contentType: 'html',
    content: `<html><head><meta http-equiv="Content-Type" content="text/html; charset=utf-8"></head><body>${escapeHtml(body.content).replace(/\n/g, '<br>')}</body></html>`,
  };
}

export const etag = (changeKey: string) => `W/"${changeKey}"`;

function when(instance: Instance, which: 'start' | 'end', zone: Zone) {
  if (instance.allDay) {
    // All-day events ignore the preferred zone: midnight to midnight in the event's own zone.
    return {
      dateTime: `${isoDate(instance.allDay[which])}T00:00:00.0000000`,
      timeZone: instance.record[which].zone.name,
    };
  }
  return { dateTime: localAt(instance[which], zone.iana), timeZone: zone.name };
}

export function renderEvent(
  instance: Instance,
  calendar: CalendarRecord,
  options: RenderOptions,
): Record<string, unknown> {
  const r = instance.record;
  const isOrganizer = r.organizer.address.toLowerCase() === calendar.owner.address.toLowerCase();
  const body = bodyAs(r.body, options.bodyType);
  const full: Record<string, unknown> = {
    '@odata.etag': etag(instance.changeKey),
    id: instance.id,
    createdDateTime: offsetTime(r.created),
    lastModifiedDateTime: offsetTime(r.modified),
    changeKey: instance.changeKey,
    categories: [...r.categories],
    transactionId: instance.type === 'occurrence' ? null : (r.transactionId ?? null),
    originalStartTimeZone: r.start.zone.name,
    originalEndTimeZone: r.end.zone.name,
    iCalUId: r.iCalUId,
    uid: r.iCalUId,
    reminderMinutesBeforeStart: r.reminderMinutesBeforeStart,
    isReminderOn: r.isReminderOn,
    hasAttachments: false,
    subject: r.subject,
    bodyPreview: htmlToText(r.body.content).slice(0, 255),
    importance: r.importance,
    sensitivity: r.sensitivity,
    isAllDay: r.isAllDay,
    isCancelled: r.isCancelled,
    isOrganizer,
    responseRequested: true,
    seriesMasterId: instance.seriesMasterId ?? null,
    showAs: r.showAs,
    type: instance.type,
    webLink: `https://outlook.office365.com/owa/?itemid=${encodeURIComponent(instance.id)}&exvsurl=1&path=/calendar/item`,
    onlineMeetingUrl: null,
    isOnlineMeeting: false,
    onlineMeetingProvider: 'unknown',
    allowNewTimeProposals: true,
    isDraft: false,
    hideAttendees: false,
    responseStatus: { response: isOrganizer ? 'organizer' : r.response, time: r.responseTime },
    body,
    start: when(instance, 'start', options.zone),
    end: when(instance, 'end', options.zone),
    location: {
      displayName: r.location,
      locationType: 'default',
      uniqueIdType: r.location === '' ? 'unknown' : 'private',
      address: {},
      coordinates: {},
    },
    locations:
      r.location === ''
        ? []
        : [{ displayName: r.location, locationType: 'default', uniqueIdType: 'private' }],
    recurrence: instance.type === 'seriesMaster' && r.recurrence ? structuredClone(r.recurrence) : null,
    attendees: r.attendees.map((a) => structuredClone(a)),
    organizer: { emailAddress: { ...r.organizer } },
    onlineMeeting: null,
  };
  if (instance.originalStart !== undefined) {
    full.originalStart = offsetTime(instance.originalStart);
  }
  const expanded = options.expand === undefined ? {} : renderExtended(r, options.expand);
  if (!options.select) {
    return { ...full, ...expanded };
  }
  const picked: Record<string, unknown> = { '@odata.etag': full['@odata.etag'], id: full.id, ...expanded };
  for (const name of options.select) {
    if (name in full) {
      picked[name] = full[name];
    }
  }
  return picked;
}

/** Every property `$select` and `$orderby` may name. */
export const EVENT_PROPERTIES = new Set([
  'id',
  'createdDateTime',
  'lastModifiedDateTime',
  'changeKey',
  'categories',
  'transactionId',
  'originalStartTimeZone',
  'originalEndTimeZone',
  'iCalUId',
  'uid',
  'reminderMinutesBeforeStart',
  'isReminderOn',
  'hasAttachments',
  'subject',
  'bodyPreview',
  'importance',
  'sensitivity',
  'isAllDay',
  'isCancelled',
  'isOrganizer',
  'responseRequested',
  'seriesMasterId',
  'showAs',
  'type',
  'webLink',
  'onlineMeetingUrl',
  'isOnlineMeeting',
  'onlineMeetingProvider',
  'allowNewTimeProposals',
  'isDraft',
  'hideAttendees',
  'responseStatus',
  'body',
  'start',
  'end',
  'location',
  'locations',
  'recurrence',
  'attendees',
  'organizer',
  'onlineMeeting',
  'originalStart',
]);

export function renderCalendar(calendar: CalendarRecord): Record<string, unknown> {
  return {
    '@odata.id': `users('${calendar.mailbox}')/calendars('${calendar.id}')`,
    id: calendar.id,
    name: calendar.name,
    color: calendar.color,
    hexColor: calendar.hexColor,
    groupClassId: '0006f0b7-0000-0000-c000-000000000046',
    isDefaultCalendar: calendar.isDefaultCalendar,
    changeKey: calendar.changeKey,
    canShare: calendar.canEdit && calendar.owner.address === calendar.mailbox,
    canViewPrivateItems: calendar.owner.address === calendar.mailbox,
    canEdit: calendar.canEdit,
    allowedOnlineMeetingProviders: ['teamsForBusiness'],
    defaultOnlineMeetingProvider: 'teamsForBusiness',
    isTallyingResponses: true,
    isRemovable: !calendar.isDefaultCalendar,
    owner: { ...calendar.owner },
  };
}
