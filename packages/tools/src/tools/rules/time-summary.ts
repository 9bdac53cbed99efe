import { prepareOccurrence } from '@calgate/rules';
import { z } from 'zod';
import { defineTool, type ToolContext } from '../../catalogue.ts';
import { mapInSlices } from '../../cpu-turns.ts';
import { instantOut, rangeBound, windowIn } from '../../range.ts';
import { calendarErrors } from '../../schemas.ts';
import { callZone } from '../availability/window.ts';
import { calendarIds } from '../read/common.ts';
import {
  CALENDAR_READS,
  filingsOf,
  MAX_RULES_DAYS,
  occurrenceKey,
  projectNames,
  readOccurrences,
  rulesCalendars,
  rulesOf,
} from './common.ts';
import { buildTimesheet, type Timesheet, type TimesheetItem, type TimesheetOptions } from './timesheet.ts';

const nameOf = (projects: ReadonlyMap<string, { name: string }>, id: string | null) =>
  id === null ? 'Unclassified' : (projects.get(id)?.name ?? id);

export interface TimesheetRequest {
  timeMin: string;
  timeMax: string;
  groupBy: TimesheetOptions['groupBy'];
  timeZone?: string | undefined;
  calendarIds?: readonly string[] | undefined;
  includeDeclined?: boolean | undefined;
  includeAllDay?: boolean | undefined;
  roundingMinutes?: number | undefined;
}

/**
 * The timesheet of the occurrences on the key's readable calendars (the named ones, or all) in
 * [timeMin, timeMax), each counted inside the range only, joined with how each is filed.
 */
export async function timesheetFor(
  request: TimesheetRequest,
  context: Pick<ToolContext, 'access' | 'rules' | 'now' | 'signal'>,
) {
  const rules = rulesOf(context);
  const { handles, unavailable } = rulesCalendars(context.access, request.calendarIds);
  const zone = callZone(context.access, request.timeZone, handles);
  const window = windowIn(request, zone, { now: context.now(), maxDays: MAX_RULES_DAYS });
  const { occurrences, errors } = await readOccurrences(handles, window, context.signal);
  const [filings, projects] = await Promise.all([filingsOf(rules, occurrences), projectNames(rules)]);
  const items: TimesheetItem[] = await mapInSlices(occurrences, (occurrence) => {
    const filing = filings.get(occurrenceKey(occurrence.calendar.id, occurrence.event.id));
    return {
      calendarId: occurrence.calendar.id,
      eventId: occurrence.event.id,
      start: Math.max(occurrence.start, window.start),
      end: Math.min(occurrence.end, window.end),
      projectId: filing?.skip ? 'skip' : (filing?.projectId ?? null),
      declined: prepareOccurrence(occurrence.rule).response === 'declined',
      allDay: occurrence.allDay,
    };
  });
  const built: Timesheet = buildTimesheet(items, {
    timeZone: zone,
    groupBy: request.groupBy,
    ...(request.includeDeclined === undefined ? {} : { includeDeclined: request.includeDeclined }),
    ...(request.includeAllDay === undefined ? {} : { includeAllDay: request.includeAllDay }),
    ...(request.roundingMinutes === undefined ? {} : { roundingMinutes: request.roundingMinutes }),
  });
  // People read projects by name: lines go by period, then name, unclassified last.
  const byName = (a: { projectId: string | null }, b: { projectId: string | null }) =>
    a.projectId === b.projectId
      ? 0
      : a.projectId === null
        ? 1
        : b.projectId === null
          ? -1
          : nameOf(projects, a.projectId).localeCompare(nameOf(projects, b.projectId));
  const sheet: Timesheet = {
    ...built,
    lines: [...built.lines].sort((a, b) => (a.period ?? '').localeCompare(b.period ?? '') || byName(a, b)),
    totals: [...built.totals].sort(byName),
  };
  return { sheet, projects, window, zone, errors: [...unavailable, ...errors] };
}

export const getTimeSummary = defineTool({
  name: 'get_time_summary',
  toolset: 'rules',
  title: 'Time per project',
  description:
    'Hours per project per day, ISO week or in all, from events on readable calendars and how they are filed. Each project counts overlapping time once; declined and all-day events left out unless asked; unclassified time is projectId null.',
  access: 'read',
  annotations: CALENDAR_READS,
  input: z.strictObject({
    timeMin: rangeBound,
    timeMax: rangeBound,
    groupBy: z.enum(['day', 'week', 'project']).default('day'),
    timeZone: z.string().min(1).max(64).optional(),
    calendarIds,
    includeDeclined: z.boolean().default(false),
    includeAllDay: z.boolean().default(false),
    roundingMinutes: z.number().int().min(0).max(60).default(15).describe('0: exact.'),
  }),
  output: z.object({
    timeZone: z.string(),
    timeMin: z.string(),
    timeMax: z.string(),
    lines: z.array(
      z.object({
        period: z.string().optional(),
        projectId: z.string().nullable(),
        project: z.string(),
        hours: z.number(),
      }),
    ),
    totals: z.array(z.object({ projectId: z.string().nullable(), project: z.string(), hours: z.number() })),
    overlaps: z.array(z.object({ date: z.string(), projectIds: z.array(z.string()), minutes: z.number() })),
    excluded: z.object({ declined: z.number(), allDay: z.number(), skipped: z.number() }),
    errors: calendarErrors,
  }),
  exampleIntent: 'How many hours did I spend on each project last week?',
  example: { timeMin: '2026-04-20', timeMax: '2026-04-26', groupBy: 'day', timeZone: 'America/New_York' },
  exampleResult: { lines: [{ period: '2026-04-21', project: 'Acme', hours: 1 }], excluded: { skipped: 1 } },
  async run(args, context) {
    const { sheet, projects, window, zone, errors } = await timesheetFor(args, context);
    return {
      timeZone: zone,
      timeMin: instantOut(window.start, zone),
      timeMax: instantOut(window.end, zone),
      lines: sheet.lines.map((line) => ({
        ...(line.period === undefined ? {} : { period: line.period }),
        projectId: line.projectId,
        project: nameOf(projects, line.projectId),
        hours: line.hours,
      })),
      totals: sheet.totals.map((total) => ({
        projectId: total.projectId,
        project: nameOf(projects, total.projectId),
        hours: total.hours,
      })),
      overlaps: sheet.overlaps,
      excluded: sheet.excluded,
      ...(errors.length === 0 ? {} : { errors }),
    };
  },
});
