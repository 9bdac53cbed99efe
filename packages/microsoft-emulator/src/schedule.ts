/**
 * `POST /me/calendar/getSchedule`: free/busy of mailboxes' default calendars only (other
 * calendars are not consulted), refused for personal Microsoft accounts. Items are the events
 * that are not cancelled, not shown as free and not declined by the mailbox (a declined
 * invitation Outlook keeps is free time); all-day events span midnight to midnight in their own
 * zone. In `availabilityView`, working elsewhere counts as free (0), as Graph documents for
 * backward compatibility.
 */
import { graphRoute } from './api.ts';
import { graphErrors } from './errors.ts';
import { json, type Route } from './http.ts';
import { calendarView } from './instances.ts';
import { context } from './me-routes.ts';
import type { MicrosoftState } from './state.ts';
import { instantOf, localAt, parseLocal } from './time.ts';
import { acceptZone } from './zones.ts';

const VIEW_DIGIT: Record<string, string> = {
  free: '0',
  tentative: '1',
  busy: '2',
  oof: '3',
  workingElsewhere: '0',
  unknown: '2',
};

function instantOfBody(value: unknown, name: string): number {
  const v = value as { dateTime?: unknown; timeZone?: unknown } | undefined;
  if (typeof v?.dateTime !== 'string') {
    throw graphErrors.invalidRequest(`${name} needs a dateTime and a timeZone.`);
  }
  const zoneName = typeof v.timeZone === 'string' ? v.timeZone : 'UTC';
  const zone = acceptZone(zoneName);
  if (!zone) {
    throw graphErrors.zoneNotSupported(zoneName);
  }
  const local = parseLocal(v.dateTime.replace(/Z$/i, ''));
  if (!local) {
    throw graphErrors.badRequest(
      `Cannot convert the literal '${v.dateTime}' to the expected type 'Edm.DateTime'.`,
    );
  }
  return instantOf(local, zone.iana);
}

export function scheduleRoutes(state: MicrosoftState): Route[] {
  return [
    graphRoute(
      state,
      'POST',
      '/me/calendar/getSchedule',
      'calendar.getSchedule',
      'calendarRead',
      (ctx, caller) => {
        if (caller.user.accountType === 'personal') {
          throw graphErrors.invalidRequest('getSchedule is not supported for personal Microsoft accounts.');
        }
        const schedules = ctx.body.schedules;
        if (!Array.isArray(schedules) || schedules.length === 0) {
          throw graphErrors.invalidRequest('The schedules property needs at least one address.');
        }
        const from = instantOfBody(ctx.body.startTime, 'startTime');
        const to = instantOfBody(ctx.body.endTime, 'endTime');
        if (to <= from) {
          throw graphErrors.invalidRequest('endTime must be after startTime.');
        }
        const interval = Number(ctx.body.availabilityViewInterval ?? 30);
        if (!Number.isInteger(interval) || interval < 5 || interval > 1440) {
          throw graphErrors.invalidRequest('availabilityViewInterval must be between 5 and 1440 minutes.');
        }
        const zone = caller.prefs.zone;
        const value = schedules.map((address) => {
          const user = state.user(String(address));
          const calendar = user
            ? state.defaultCalendar((user.mail ?? user.userPrincipalName).toLowerCase())
            : undefined;
          if (!user || !calendar) {
            return {
              scheduleId: String(address),
              availabilityView: '',
              scheduleItems: [],
              error: {
                message: `The requested user '${String(address)}' is invalid.`,
                responseCode: 'ErrorInvalidUser',
              },
            };
          }
          const busy = calendarView(calendar, from, to).filter(
            (i) => !i.record.isCancelled && i.record.showAs !== 'free' && i.record.response !== 'declined',
          );
          let view = '';
          for (let t = from; t < to; t += interval * 60_000) {
            const slotEnd = Math.min(to, t + interval * 60_000);
            const here = busy.filter((i) => i.start < slotEnd && i.end > t);
            view += here.reduce((best, i) => {
              const d = VIEW_DIGIT[i.record.showAs] ?? '2';
              return d > best ? d : best;
            }, '0');
          }
          return {
            scheduleId: String(address),
            availabilityView: view,
            scheduleItems: busy.map((i) => ({
              isPrivate: i.record.sensitivity === 'private',
              status: i.record.showAs,
              subject: i.record.sensitivity === 'private' ? '' : i.record.subject,
              location: i.record.sensitivity === 'private' ? '' : i.record.location,
              isMeeting: i.record.attendees.length > 0,
              isRecurring: i.type !== 'singleInstance',
              isException: i.type === 'exception',
              isReminderSet: i.record.isReminderOn,
              start: { dateTime: localAt(i.start, zone.iana), timeZone: zone.name },
              end: { dateTime: localAt(i.end, zone.iana), timeZone: zone.name },
            })),
            workingHours: {
              daysOfWeek: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'],
              startTime: '08:00:00.0000000',
              endTime: '17:00:00.0000000',
              timeZone: { name: user.timeZone },
            },
          };
        });
        return json({
          '@odata.context': context(ctx, 'Collection(microsoft.graph.scheduleInformation)'),
          value,
        });
      },
    ),
  ];
}
