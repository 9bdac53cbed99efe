/** calendarList: list (with paging and sync), get, insert, update/patch (colors, hidden, selected …), delete. */
import { type ApiDeps, apiRoute, boolParam } from '../api.ts';
import { calendarAccess, type Principal } from '../auth.ts';
import { apiErrors } from '../errors.ts';
import {
  decodePageToken,
  decodeSyncToken,
  encodePageToken,
  encodeSyncToken,
  pageSize,
  queryFingerprint,
} from '../events/tokens.ts';
import { json, noContent, type RequestContext, type Route } from '../http.ts';
import { calendarColor, type EmulatorState, etagOf, type ListEntry, ROLE_RANK } from '../state.ts';

export function renderEntry(state: EmulatorState, email: string, entry: ListEntry): Record<string, unknown> {
  const calendar = state.calendars.get(entry.calendarId);
  const out: Record<string, unknown> = {
    kind: 'calendar#calendarListEntry',
    etag: etagOf(entry.stamp),
    id: entry.calendarId,
  };
  if (entry.deleted || !calendar) {
    return { ...out, deleted: true };
  }
  Object.assign(out, {
    summary: calendar.summary,
    ...(calendar.description === undefined ? {} : { description: calendar.description }),
    ...(calendar.location === undefined ? {} : { location: calendar.location }),
    timeZone: calendar.timeZone,
    ...(entry.summaryOverride === undefined ? {} : { summaryOverride: entry.summaryOverride }),
    colorId: entry.colorId,
    backgroundColor: entry.backgroundColor,
    foregroundColor: entry.foregroundColor,
    ...(entry.hidden ? { hidden: true } : {}),
    ...(entry.selected ? { selected: true } : {}),
    accessRole: state.roleOf(calendar, email),
    defaultReminders: entry.defaultReminders,
    ...(entry.notificationSettings === undefined ? {} : { notificationSettings: entry.notificationSettings }),
    ...(calendar.primary && calendar.id === email ? { primary: true } : {}),
    ...(calendar.primary ? {} : { dataOwner: calendar.dataOwner }),
    conferenceProperties: { allowedConferenceSolutionTypes: ['hangoutsMeet'] },
  });
  return out;
}

function entryFor(state: EmulatorState, principal: Principal, calendarId: string): ListEntry {
  const id = calendarId === 'primary' ? principal.email : calendarId;
  const entry = state.calendarLists.get(principal.email)?.get(id);
  if (!entry || entry.deleted || !state.calendars.has(id)) {
    throw apiErrors.notFound();
  }
  return entry;
}

function applyEntryChanges(ctx: RequestContext, entry: ListEntry, mode: 'update' | 'patch'): void {
  const b = ctx.body;
  const rgb = boolParam(ctx.query, 'colorRgbFormat');
  if (b.colorId !== undefined) {
    if (typeof b.colorId !== 'string' || !/^(?:[1-9]|1\d|2[0-4])$/.test(b.colorId)) {
      throw apiErrors.invalid('Invalid color ID.');
    }
    entry.colorId = b.colorId;
    entry.backgroundColor = calendarColor(b.colorId);
  }
  if (rgb) {
    for (const field of ['backgroundColor', 'foregroundColor'] as const) {
      const value = b[field];
      if (value !== undefined) {
        if (typeof value !== 'string' || !/^#[0-9a-fA-F]{6}$/.test(value)) {
          throw apiErrors.invalid(`Invalid value for ${field}.`);
        }
        entry[field] = value.toLowerCase();
      }
    }
  }
  if (b.hidden !== undefined || mode === 'update') {
    entry.hidden = b.hidden === true;
    if (entry.hidden) {
      entry.selected = false; // hiding a calendar also takes it out of the UI's selection
    }
  }
  if (b.selected !== undefined || mode === 'update') {
    entry.selected = b.selected === true;
  }
  if (b.summaryOverride !== undefined || mode === 'update') {
    if (typeof b.summaryOverride === 'string') {
      entry.summaryOverride = b.summaryOverride;
    } else {
      delete entry.summaryOverride;
    }
  }
  if (b.defaultReminders !== undefined) {
    if (!Array.isArray(b.defaultReminders)) {
      throw apiErrors.invalid('Invalid defaultReminders.');
    }
    entry.defaultReminders = b.defaultReminders as ListEntry['defaultReminders'];
  }
  if (b.notificationSettings !== undefined) {
    entry.notificationSettings = b.notificationSettings;
  }
}

export function calendarListRoutes(deps: ApiDeps): Route[] {
  const { state } = deps;
  const change = (mode: 'update' | 'patch') =>
    apiRoute(
      deps,
      mode === 'update' ? 'PUT' : 'PATCH',
      '/users/me/calendarList/:calendarId',
      `calendarList.${mode}`,
      'listWrite',
      (ctx, principal) => {
        const entry = entryFor(state, principal, ctx.params.calendarId ?? '');
        applyEntryChanges(ctx, entry, mode);
        state.touchEntry(entry);
        return json(renderEntry(state, principal.email, entry));
      },
    );
  return [
    apiRoute(deps, 'GET', '/users/me/calendarList', 'calendarList.list', 'listRead', (ctx, principal) => {
      const q = ctx.query;
      const subject = { id: `list:${principal.email}`, seq: state.listSeq, syncFloor: 0 };
      const syncToken = q.get('syncToken');
      if (syncToken !== null && (q.has('minAccessRole') || q.has('showOwnOrganizationOnly'))) {
        throw apiErrors.invalid('Sync token cannot be used with other request restrictions.', 'syncToken');
      }
      const since =
        syncToken === null ? undefined : decodeSyncToken(syncToken, subject, state.epoch, 'calendarList');
      const minRole = q.get('minAccessRole');
      if (minRole !== null && !(minRole in ROLE_RANK)) {
        throw apiErrors.invalid(`Invalid value for minAccessRole: ${minRole}`, 'minAccessRole');
      }
      const showDeleted = since !== undefined || boolParam(q, 'showDeleted');
      const showHidden = since !== undefined || boolParam(q, 'showHidden');
      const entries = [...(state.calendarLists.get(principal.email)?.values() ?? [])].filter((entry) => {
        const calendar = state.calendars.get(entry.calendarId);
        const deleted = entry.deleted || !calendar;
        if (
          (deleted && !showDeleted) ||
          (entry.hidden && !showHidden) ||
          (since !== undefined && entry.seq <= since)
        ) {
          return false;
        }
        const rank = calendar ? ROLE_RANK[state.roleOf(calendar, principal.email)] : 0;
        return minRole === null || deleted || rank >= ROLE_RANK[minRole as keyof typeof ROLE_RANK];
      });
      const max = pageSize(q.get('maxResults'), 100, 250);
      const fingerprint = queryFingerprint(q);
      const pageToken = q.get('pageToken');
      const cursor = pageToken ? decodePageToken(pageToken, fingerprint) : null;
      const offset = cursor ? Number(cursor.after[0]) : 0;
      const page = entries.slice(offset, offset + max);
      const body: Record<string, unknown> = { kind: 'calendar#calendarList', etag: etagOf(state.listSeq) };
      if (offset + max < entries.length) {
        body.nextPageToken = encodePageToken({
          after: [offset + max],
          snapshot: cursor?.snapshot ?? state.listSeq,
          query: fingerprint,
        });
      } else {
        body.nextSyncToken = encodeSyncToken(
          subject,
          cursor?.snapshot ?? state.listSeq,
          state.epoch,
          'calendarList',
        );
      }
      body.items = page.map((entry) => renderEntry(state, principal.email, entry));
      return json(body);
    }),
    apiRoute(
      deps,
      'GET',
      '/users/me/calendarList/:calendarId',
      'calendarList.get',
      'listRead',
      (ctx, principal) =>
        json(renderEntry(state, principal.email, entryFor(state, principal, ctx.params.calendarId ?? ''))),
    ),
    apiRoute(deps, 'POST', '/users/me/calendarList', 'calendarList.insert', 'listWrite', (ctx, principal) => {
      if (typeof ctx.body.id !== 'string' || ctx.body.id === '') {
        throw apiErrors.required('Required', 'id');
      }
      const { calendar } = calendarAccess(state, principal, ctx.body.id, 'freeBusyReader');
      const entry = state.addToList(principal.email, calendar.id);
      applyEntryChanges(ctx, entry, 'patch');
      return json(renderEntry(state, principal.email, entry));
    }),
    change('update'),
    change('patch'),
    apiRoute(
      deps,
      'DELETE',
      '/users/me/calendarList/:calendarId',
      'calendarList.delete',
      'listWrite',
      (ctx, principal) => {
        const entry = entryFor(state, principal, ctx.params.calendarId ?? '');
        if (entry.calendarId === principal.email) {
          throw apiErrors.badRequest(
            'cannotRemovePrimaryCalendar',
            'Cannot remove the primary calendar from the list.',
          );
        }
        entry.deleted = true;
        state.touchEntry(entry);
        return noContent();
      },
    ),
  ];
}
