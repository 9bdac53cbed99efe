/**
 * freeBusy.query: busy intervals per calendar, merged and clipped to the query window. Free
 * (transparent) events, cancelled events and invitations the calendar declined are not busy;
 * all-day events are busy from midnight to midnight in the calendar's zone. Calendars the caller
 * cannot see get a per-calendar `notFound` error instead of failing the whole query.
 */
import { formatInstant } from '@calgate/core';
import { type ApiDeps, apiRoute } from '../api.ts';
import type { Principal } from '../auth.ts';
import { apiErrors } from '../errors.ts';
import { selectRows } from '../events/query.ts';
import { parseQueryInstant, queryZone } from '../events/times.ts';
import { json, type Route } from '../http.ts';
import type { EmulatorState } from '../state.ts';

const MAX_CALENDARS = 50;

function busyOf(state: EmulatorState, principal: Principal, id: string, from: number, to: number) {
  const calendarId = id === 'primary' ? principal.email : id;
  const calendar = state.calendars.get(calendarId);
  if (!calendar || state.roleOf(calendar, principal.email) === 'none') {
    return null;
  }
  const rows = selectRows(
    calendar,
    {
      timeMin: from,
      timeMax: to,
      singleEvents: true,
      showDeleted: false,
      terms: [],
      privateProps: [],
      sharedProps: [],
    },
    state,
  );
  const intervals: [number, number][] = [];
  for (const row of rows) {
    const attendees = (row.data.attendees as { email?: string; responseStatus?: string }[] | undefined) ?? [];
    const declined = attendees.some((a) => a.email === calendar.id && a.responseStatus === 'declined');
    if (row.cancelled || row.data.transparency === 'transparent' || declined || row.endMs <= row.startMs) {
      continue;
    }
    intervals.push([Math.max(row.startMs, from), Math.min(row.endMs, to)]);
  }
  intervals.sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [s, e] of intervals) {
    const last = merged.at(-1);
    if (last && s <= last[1]) {
      last[1] = Math.max(last[1], e);
    } else {
      merged.push([s, e]);
    }
  }
  return merged;
}

export function freeBusyRoutes(deps: ApiDeps): Route[] {
  const { state } = deps;
  return [
    apiRoute(deps, 'POST', '/freeBusy', 'freebusy.query', 'freeBusy', (ctx, principal) => {
      const b = ctx.body;
      if (typeof b.timeMin !== 'string' || b.timeMin === '') {
        throw apiErrors.required('Missing timeMin.');
      }
      if (typeof b.timeMax !== 'string' || b.timeMax === '') {
        throw apiErrors.required('Missing timeMax.');
      }
      const from = parseQueryInstant(b.timeMin, 'timeMin');
      const to = parseQueryInstant(b.timeMax, 'timeMax');
      if (to <= from) {
        throw apiErrors.timeRangeEmpty();
      }
      const zone = queryZone(typeof b.timeZone === 'string' ? b.timeZone : null);
      const expansionMax =
        b.calendarExpansionMax === undefined ? MAX_CALENDARS : Number(b.calendarExpansionMax);
      if (!Number.isInteger(expansionMax) || expansionMax < 1 || expansionMax > MAX_CALENDARS) {
        throw apiErrors.invalid(`Invalid value for calendarExpansionMax: ${String(b.calendarExpansionMax)}`);
      }
      const items = Array.isArray(b.items) ? (b.items as { id?: unknown }[]) : [];
      if (items.length > expansionMax) {
        throw apiErrors.badRequest(
          'tooManyCalendarsRequested',
          'The number of calendars requested is too large for a single query.',
          'calendar',
        );
      }
      const calendars: Record<string, unknown> = {};
      for (const item of items) {
        const id = typeof item?.id === 'string' ? item.id : '';
        const busy = id === '' ? null : busyOf(state, principal, id, from, to);
        calendars[id] =
          busy === null
            ? { errors: [{ domain: 'global', reason: 'notFound' }], busy: [] }
            : {
                busy: busy.map(([s, e]) => ({ start: formatInstant(s, zone), end: formatInstant(e, zone) })),
              };
      }
      return json({
        kind: 'calendar#freeBusy',
        timeMin: new Date(from).toISOString(),
        timeMax: new Date(to).toISOString(),
        calendars,
      });
    }),
  ];
}
