import { CalgateError, dateFromEpochDay, epochDay, formatDate, weekdayOfEpochDay } from '@calgate/core';
import { localDays, timesheetCsv, timesheetFor } from '@calgate/tools';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { type ApiDeps, parse } from './deps.ts';
import { ownerContext } from './owner.ts';

export const IsoWeek = z.string().regex(/^\d{4}-W\d{2}$/, { message: 'use an ISO week, e.g. 2026-W48' });
export const RANGE_MESSAGE = 'give either week=YYYY-Www or both timeMin and timeMax';

/** Exactly one of a week or a full range. */
export function oneRange(query: {
  week?: string | undefined;
  timeMin?: string | undefined;
  timeMax?: string | undefined;
}) {
  return query.week !== undefined
    ? query.timeMin === undefined && query.timeMax === undefined
    : query.timeMin !== undefined && query.timeMax !== undefined;
}

const Range = z
  .strictObject({
    week: IsoWeek.optional(),
    timeMin: z.string().min(1).max(64).optional(),
    timeMax: z.string().min(1).max(64).optional(),
    timeZone: z.string().min(1).max(64).optional(),
  })
  .refine(oneRange, { message: RANGE_MESSAGE });

/** Monday to Sunday (`YYYY-MM-DD`) of an ISO week; a week the year does not have is refused. */
export function weekRange(week: string): { timeMin: string; timeMax: string } {
  const year = Number(week.slice(0, 4));
  const number = Number(week.slice(6));
  const january4 = epochDay(year, 1, 4);
  const monday = january4 - weekdayOfEpochDay(january4) + (number - 1) * 7;
  // A week belongs to the year its Thursday falls in.
  if (number < 1 || dateFromEpochDay(monday + 3).year !== year) {
    throw new CalgateError('invalid_argument', `week: ${year} has no week ${number}.`);
  }
  return {
    timeMin: formatDate(dateFromEpochDay(monday)),
    timeMax: formatDate(dateFromEpochDay(monday + 6)),
  };
}

/** The timesheet by day over the tenant's calendars, for a week or any range up to a year. */
async function timesheetOf(deps: ApiDeps, request: FastifyRequest, reply: FastifyReply) {
  const session = await deps.guard.session(request);
  const query = parse(Range, request.query);
  const range =
    query.week === undefined
      ? { timeMin: query.timeMin ?? '', timeMax: query.timeMax ?? '' }
      : weekRange(query.week);
  const context = await ownerContext(deps, reply, session);
  // Days split in the zone asked for, else the workspace's (else the calendars' shared zone).
  const timeZone = query.timeZone ?? context.access.principal.workspaceTimeZone ?? undefined;
  const result = await timesheetFor({ ...range, timeZone, groupBy: 'day' }, context);
  return { ...result, week: query.week, tenantId: session.tenantId };
}

/**
 * The weekly table and its CSV. The table has a row per live project (and per archived project
 * with time), Unclassified last, a cell per day; row, day and grand totals add up the cells.
 */
export function registerTimesheetRoutes(app: FastifyInstance, deps: ApiDeps): void {
  app.get('/api/v1/timesheet', async (request, reply) => {
    const { sheet, projects, window, zone, errors, week, tenantId } = await timesheetOf(deps, request, reply);
    const days = localDays(window.start, window.end, zone);
    const live = await deps.rulesRepository.projects.list(tenantId);
    const minutes = new Map<string | null, Map<string, number>>();
    for (const project of live) {
      minutes.set(project.id, new Map());
    }
    for (const line of sheet.lines) {
      const cells = minutes.get(line.projectId) ?? new Map<string, number>();
      minutes.set(line.projectId, cells);
      cells.set(line.period ?? '', line.minutes);
    }
    if (!minutes.has(null)) {
      minutes.set(null, new Map());
    }
    const order = (id: string | null) => (id === null ? '\uffff' : (projects.get(id)?.name ?? id));
    const rows = [...minutes]
      .sort(([a], [b]) => (a === null ? 1 : b === null ? -1 : order(a).localeCompare(order(b))))
      .map(([projectId, cells]) => {
        const project = projectId === null ? undefined : projects.get(projectId);
        const total = [...cells.values()].reduce((sum, value) => sum + value, 0);
        return {
          projectId,
          project: projectId === null ? 'Unclassified' : (project?.name ?? projectId),
          client: project?.client ?? null,
          colour: live.find((item) => item.id === projectId)?.colour ?? null,
          hours: days.map((day) => (cells.get(day) ?? 0) / 60),
          total: total / 60,
        };
      });
    const dayTotals = days.map((_, index) => rows.reduce((sum, row) => sum + (row.hours[index] ?? 0), 0));
    return {
      ...(week === undefined ? {} : { week }),
      timeZone: zone,
      timeMin: days[0],
      timeMax: days.at(-1),
      days,
      roundingMinutes: sheet.roundingMinutes,
      rows,
      dayTotals,
      total: dayTotals.reduce((sum, value) => sum + value, 0),
      overlaps: sheet.overlaps,
      excluded: sheet.excluded,
      ...(errors.length === 0 ? {} : { errors }),
    };
  });

  app.get('/api/v1/timesheet.csv', async (request, reply) => {
    const { sheet, projects, window, zone, week } = await timesheetOf(deps, request, reply);
    const days = localDays(window.start, window.end, zone);
    const name = week ?? `${days[0]}_${days.at(-1)}`;
    return reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="calgate-timesheet-${name}.csv"`)
      .header('cache-control', 'no-store')
      .send(timesheetCsv(sheet, projects));
  });
}
