import { CalgateError, fromLocal, parseDate, parseDateTime } from '@calgate/core';
import type { CalendarEvent } from '@calgate/providers';
import {
  type CompiledQuery,
  closest,
  compileQuery,
  type EventOccurrence,
  type ScoringRule,
} from '@calgate/rules';
import type { CalendarAccess, CalendarHandle, KeyCalendar } from '../../access.ts';
import type {
  OccurrenceFiling,
  RulesProject,
  RulesServices,
  StoredRule,
  ToolContext,
} from '../../catalogue.ts';
import { mergeEvents } from '../../merge.ts';
import { instantOut, type Window } from '../../range.ts';
import { errorsOut, readableHandles } from '../read/common.ts';

/** The widest range one rules call reads. */
export const MAX_RULES_DAYS = 366;
/** The most occurrences one rules call reads; a range holding more is refused, not cut short. */
export const MAX_OCCURRENCES = 10_000;

/** Reads of Calgate's own records (projects, rules). */
export const READS = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const;

/** Reads that also read calendars, which may live at Google. */
export const CALENDAR_READS = { ...READS, openWorldHint: true } as const;

export const SYNTAX_POINTER = 'Syntax: resource calgate://docs/rules-syntax.';
/** How a query combines conditions, said where a tool takes one. */
export const OPERATORS = "AND is implicit (may be written), OR in any case, '-' negates (not NOT).";

/** The rules services, or 'unavailable' where the gateway has none. */
export function rulesOf(context: Pick<ToolContext, 'rules'>): RulesServices {
  if (context.rules === undefined) {
    throw new CalgateError('unavailable', 'Classification rules are not available on this gateway.');
  }
  return context.rules;
}

/** A query compiled, or its error (a message with "position N") as the tool's error. */
export function compiled(query: string): CompiledQuery {
  const result = compileQuery(query);
  if (!result.ok) {
    throw result.error;
  }
  return result.value;
}

/** Stored rules ready to vote; a stored query that no longer parses does not vote. */
export function scoringRules(rules: readonly StoredRule[]): ScoringRule[] {
  return rules.flatMap((rule) => {
    const query = compileQuery(rule.query);
    return query.ok
      ? [
          {
            id: rule.id,
            projectId: rule.projectId,
            weight: rule.weight,
            enabled: rule.enabled,
            query: query.value,
          },
        ]
      : [];
  });
}

/** One occurrence read from a calendar the key can read, with its span in epoch milliseconds. */
export interface ReadOccurrence {
  calendar: KeyCalendar;
  event: CalendarEvent;
  rule: EventOccurrence;
  start: number;
  end: number;
  allDay: boolean;
}

/** An event time as epoch milliseconds: a date is the start of that day in `zone`. */
function instantOf(time: CalendarEvent['start'], zone: string): number | undefined {
  if (time.dateTime !== undefined) {
    const parsed = parseDateTime(time.dateTime, time.timeZone ?? zone);
    return parsed.ok ? parsed.value : undefined;
  }
  if (time.date !== undefined) {
    const date = parseDate(time.date);
    return date.ok
      ? fromLocal({ ...date.value, hour: 0, minute: 0, second: 0, millisecond: 0 }, zone)
      : undefined;
  }
  return undefined;
}

/** The calendar as rules see it; an email-like upstream id is the owner's address. */
function ruleCalendar(calendar: KeyCalendar): EventOccurrence['calendar'] {
  return {
    id: calendar.id,
    summary: calendar.summary,
    timeZone: calendar.timeZone,
    ...(calendar.externalId.includes('@') ? { ownerEmail: calendar.externalId } : {}),
  };
}

/** An event as a rules occurrence; undefined when its times cannot be read. */
export function occurrenceOf(calendar: KeyCalendar, event: CalendarEvent): ReadOccurrence | undefined {
  const start = instantOf(event.start, calendar.timeZone);
  const end = instantOf(event.end, calendar.timeZone) ?? start;
  if (start === undefined || end === undefined) {
    return undefined;
  }
  return {
    calendar,
    event,
    rule: { calendar: ruleCalendar(calendar), event },
    start,
    end: Math.max(start, end),
    allDay: event.start.dateTime === undefined,
  };
}

/**
 * Every occurrence (recurring series expanded) overlapping the window on the named calendars, or
 * every calendar the key can read. Calendars that cannot be read right now are reported apart;
 * a window holding more than MAX_OCCURRENCES is refused.
 */
export async function readOccurrences(
  handles: readonly CalendarHandle[],
  window: Window,
  signal: AbortSignal,
): Promise<{
  occurrences: ReadOccurrence[];
  errors: { calendarId: string; code: string; message: string }[];
}> {
  const merged = await mergeEvents(
    handles,
    {
      timeMin: new Date(window.start).toISOString(),
      timeMax: new Date(window.end).toISOString(),
      singleEvents: true,
      orderBy: 'startTime',
    },
    MAX_OCCURRENCES,
    undefined,
    signal,
  );
  if (merged.nextPageToken !== undefined) {
    throw new CalgateError(
      'invalid_argument',
      `The range holds more than ${MAX_OCCURRENCES.toLocaleString('en')} events; ask for a shorter range or fewer calendarIds.`,
    );
  }
  const calendars = new Map(handles.map((handle) => [handle.calendar.id, handle.calendar]));
  const occurrences: ReadOccurrence[] = [];
  for (const { calendarId, event } of merged.items) {
    const calendar = calendars.get(calendarId);
    const occurrence =
      calendar === undefined || event.status === 'cancelled' ? undefined : occurrenceOf(calendar, event);
    if (occurrence !== undefined) {
      occurrences.push(occurrence);
    }
  }
  return { occurrences, errors: errorsOut(merged.errors) };
}

/** The readable calendars a rules call reads (at least one), and those unavailable right now. */
export function rulesCalendars(access: CalendarAccess, ids: readonly string[] | undefined) {
  const found = readableHandles(access, ids);
  if (found.handles.length === 0 && found.unavailable.length === 0) {
    throw new CalgateError('not_found', 'No enabled calendar this key can read; see list_calendars.');
  }
  return { handles: found.handles, unavailable: errorsOut(found.unavailable) };
}

/** The stored filings of these occurrences, looked up per calendar. */
export async function filingsOf(
  rules: RulesServices,
  occurrences: readonly ReadOccurrence[],
): Promise<Map<string, OccurrenceFiling>> {
  const byCalendar = new Map<string, string[]>();
  for (const { calendar, event } of occurrences) {
    const ids = byCalendar.get(calendar.id) ?? [];
    ids.push(event.id);
    byCalendar.set(calendar.id, ids);
  }
  const out = new Map<string, OccurrenceFiling>();
  for (const [calendarId, ids] of byCalendar) {
    for (const [eventId, filing] of await rules.filings(calendarId, ids)) {
      out.set(occurrenceKey(calendarId, eventId), filing);
    }
  }
  return out;
}

export const occurrenceKey = (calendarId: string, eventId: string) => `${calendarId}\u0000${eventId}`;

/** What a filing says in answers: a project id, `skip`, or null (pending or never filed). */
export function filedAs(
  filing: Pick<OccurrenceFiling, 'projectId' | 'skip'> | null | undefined,
): string | null {
  if (filing === null || filing === undefined) {
    return null;
  }
  return filing.skip ? 'skip' : filing.projectId;
}

/** An occurrence's start or end in Google's shape, an instant written in `zone`. */
export function timeOut(
  time: CalendarEvent['start'],
  ms: number,
  zone: string,
): { dateTime?: string; date?: string } {
  return time.dateTime === undefined && time.date !== undefined
    ? { date: time.date }
    : { dateTime: instantOut(ms, zone) };
}

/**
 * `given` when it is the id of one of the tenant's projects (archived ones too: the store
 * refuses filing into those with its own message). A project's name, or a near miss of one,
 * where the id belongs is refused with the id to use.
 */
export async function projectIdOf(rules: RulesServices, given: string): Promise<string> {
  const projects = await rules.listProjects(true);
  if (projects.some((project) => project.id === given)) {
    return given;
  }
  throw unknownProject(given, projects);
}

/** `not_found` for a projectId that is no project's id, with the id of the project meant. */
export function unknownProject(
  given: string,
  projects: readonly Pick<RulesProject, 'id' | 'name'>[],
): CalgateError {
  const wanted = given.trim().toLowerCase();
  const near = closest(
    given,
    projects.map((project) => project.name),
  );
  const meant =
    projects.find(
      (project) => project.name.toLowerCase() === wanted || project.id.toLowerCase() === wanted,
    ) ?? projects.find((project) => project.name === near);
  return new CalgateError(
    'not_found',
    meant === undefined
      ? `No project ${given} in this tenant; see list_projects.`
      : `No project ${given} in this tenant. Did you mean '${meant.id}' (${meant.name})? projectId takes a project's id, as list_projects gives it.`,
  );
}

/** A rule as answers show it, with its project's name. */
export function ruleOut(rule: StoredRule, projects: ReadonlyMap<string, { name: string }>) {
  return {
    id: rule.id,
    projectId: rule.projectId,
    project: projects.get(rule.projectId)?.name ?? rule.projectId,
    query: rule.query,
    weight: rule.weight,
    enabled: rule.enabled,
  };
}

export async function projectNames(
  rules: RulesServices,
): Promise<Map<string, { name: string; client: string | null }>> {
  return new Map((await rules.listProjects(true)).map((project) => [project.id, project]));
}
