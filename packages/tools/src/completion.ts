/**
 * `completion/complete`: values for the calendar resource template's `calendarId` and for prompt
 * arguments (time zones, calendar ids, project names), filtered by what has been typed.
 */
import type { CompleteRequest, CompleteResult } from '@modelcontextprotocol/server';
import type { CalendarAccess, KeyCalendar } from './access.ts';
import type { RulesServices } from './catalogue.ts';
import { promptArguments } from './prompts.ts';
import { CALENDAR_URI_TEMPLATE, resourceCalendars } from './resources/calendars.ts';

/** MCP caps a completion at 100 values. */
export const MAX_COMPLETIONS = 100;

export interface CompletionContext {
  access: CalendarAccess;
  /** The tools the key sees: prompts and project names follow them. */
  visible: ReadonlySet<string>;
  rules?: RulesServices | undefined;
}

const fold = (text: string) => text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();

let zones: readonly string[] | undefined;

/** IANA zones this runtime knows, with UTC (which Intl lists only under its aliases). */
function timeZones(): readonly string[] {
  zones ??= [...new Set(['UTC', ...Intl.supportedValuesOf('timeZone')])];
  return zones;
}

/** Zones whose name, or its part after a slash, starts with the typed text. */
export function completeTimeZone(typed: string): string[] {
  const wanted = fold(typed);
  return timeZones().filter((zone) => {
    const name = fold(zone);
    return (
      name.startsWith(wanted) ||
      name
        .split('/')
        .slice(1)
        .some((part) => part.startsWith(wanted))
    );
  });
}

/** Ids of the calendars whose id or name starts with the typed text. */
export function completeCalendarId(calendars: readonly KeyCalendar[], typed: string): string[] {
  const wanted = fold(typed);
  return calendars
    .filter((calendar) => fold(calendar.id).startsWith(wanted) || fold(calendar.summary).startsWith(wanted))
    .map((calendar) => calendar.id);
}

async function completeProject(context: CompletionContext, typed: string): Promise<string[]> {
  // Project names belong to the rules toolset; a key without it is not told them.
  if (context.rules === undefined || !context.visible.has('list_projects')) {
    return [];
  }
  const wanted = fold(typed);
  const projects = await context.rules.listProjects(false);
  return projects.map((project) => project.name).filter((name) => fold(name).startsWith(wanted));
}

function promptValues(
  context: CompletionContext,
  argument: string,
  typed: string,
): string[] | Promise<string[]> {
  switch (argument) {
    case 'timeZone':
      return completeTimeZone(typed);
    case 'calendarId':
      return completeCalendarId(
        context.access.list().filter((calendar) => calendar.canRead && calendar.enabled),
        typed,
      );
    case 'project':
      return completeProject(context, typed);
    default:
      return [];
  }
}

function result(values: readonly string[]): CompleteResult {
  return {
    completion: {
      values: values.slice(0, MAX_COMPLETIONS),
      total: values.length,
      hasMore: values.length > MAX_COMPLETIONS,
    },
  };
}

/** Completion values for one argument; nothing for what Calgate cannot complete. */
export async function complete(
  params: CompleteRequest['params'],
  context: CompletionContext,
): Promise<CompleteResult> {
  const { ref, argument } = params;
  if (ref.type === 'ref/resource') {
    if (ref.uri === CALENDAR_URI_TEMPLATE && argument.name === 'calendarId') {
      return result(completeCalendarId(resourceCalendars(context.access), argument.value));
    }
    return result([]);
  }
  const names = promptArguments(ref.name, context);
  if (names === undefined || !names.includes(argument.name)) {
    return result([]);
  }
  return result(await promptValues(context, argument.name, argument.value));
}
