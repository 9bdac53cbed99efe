/**
 * Time per project, as a person bills or reports it: an occurrence's time is counted on the
 * local day(s) it falls on in the timesheet's zone (an event past midnight is split), time of
 * one project that overlaps itself is counted once, time two projects share is counted for both
 * and reported as an overlap, declined and all-day events are left out unless asked for, and each
 * line is rounded (to 15 minutes by default). Unclassified (pending) time is a line of its own;
 * time classified `skip` is not time worked and is left out. Pure: no I/O.
 */
import {
  addDays,
  dateFromEpochDay,
  epochDay,
  formatDate,
  fromLocal,
  type LocalDate,
  toLocal,
  weekdayOfEpochDay,
} from '@calgate/core';

const MINUTE = 60_000;

/** One occurrence as the timesheet sees it. `projectId` null: unclassified; 'skip': not counted. */
export interface TimesheetItem {
  calendarId: string;
  eventId: string;
  start: number;
  end: number;
  projectId: string | null;
  declined: boolean;
  allDay: boolean;
}

export interface TimesheetOptions {
  /** IANA zone the days are counted in. */
  timeZone: string;
  groupBy: 'day' | 'week' | 'project';
  includeDeclined?: boolean;
  includeAllDay?: boolean;
  /** Each line is rounded to the nearest multiple (half up); 0 leaves minutes exact. Default 15. */
  roundingMinutes?: number;
}

export interface TimesheetLine {
  /** `YYYY-MM-DD` (day), `YYYY-Www` (ISO week) or absent (project totals). */
  period?: string;
  /** null: unclassified time. */
  projectId: string | null;
  minutes: number;
  hours: number;
}

export interface TimesheetOverlap {
  date: string;
  projectIds: [string, string];
  minutes: number;
}

export interface Timesheet {
  timeZone: string;
  groupBy: TimesheetOptions['groupBy'];
  roundingMinutes: number;
  lines: TimesheetLine[];
  /** Per project over the whole range, rounded like the lines (null: unclassified). */
  totals: { projectId: string | null; minutes: number; hours: number }[];
  overlaps: TimesheetOverlap[];
  /** Occurrences left out, by reason. */
  excluded: { declined: number; allDay: number; skipped: number };
}

type Span = [number, number];

/** Sorted, disjoint union of spans. */
function union(spans: readonly Span[]): Span[] {
  const sorted = [...spans].sort((a, b) => a[0] - b[0]);
  const out: Span[] = [];
  for (const [start, end] of sorted) {
    const last = out.at(-1);
    if (last !== undefined && start <= last[1]) {
      last[1] = Math.max(last[1], end);
    } else {
      out.push([start, end]);
    }
  }
  return out;
}

function length(spans: readonly Span[]): number {
  return spans.reduce((sum, [start, end]) => sum + end - start, 0);
}

/** Total length of the intersection of two sorted disjoint span lists. */
function shared(a: readonly Span[], b: readonly Span[]): number {
  let i = 0;
  let j = 0;
  let total = 0;
  while (i < a.length && j < b.length) {
    const [aStart, aEnd] = a[i] as Span;
    const [bStart, bEnd] = b[j] as Span;
    total += Math.max(0, Math.min(aEnd, bEnd) - Math.max(aStart, bStart));
    if (aEnd < bEnd) {
      i++;
    } else {
      j++;
    }
  }
  return total;
}

function dayOf(instant: number, zone: string): number {
  const local = toLocal(instant, zone);
  return epochDay(local.year, local.month, local.day);
}

function startOfDay(day: number, zone: string): number {
  const date: LocalDate = dateFromEpochDay(day);
  return fromLocal({ ...date, hour: 0, minute: 0, second: 0, millisecond: 0 }, zone);
}

/** `YYYY-Www` of the ISO week holding the day. */
function isoWeek(day: number): string {
  const thursday = day - weekdayOfEpochDay(day) + 3;
  const year = dateFromEpochDay(thursday).year;
  const firstThursday = epochDay(year, 1, 4) - weekdayOfEpochDay(epochDay(year, 1, 4)) + 3;
  const week = Math.floor((thursday - firstThursday) / 7) + 1;
  return `${year}-W${String(week).padStart(2, '0')}`;
}

function rounded(minutes: number, step: number): number {
  return step === 0 ? minutes : Math.floor(minutes / step + 0.5) * step;
}

function line(period: string | undefined, projectId: string | null, ms: number, step: number): TimesheetLine {
  const minutes = rounded(ms / MINUTE, step);
  return { ...(period === undefined ? {} : { period }), projectId, minutes, hours: minutes / 60 };
}

/** Project order in answers: by id, unclassified last. */
function byProject(a: string | null, b: string | null): number {
  return a === b ? 0 : a === null ? 1 : b === null ? -1 : a.localeCompare(b);
}

export function buildTimesheet(items: readonly TimesheetItem[], options: TimesheetOptions): Timesheet {
  const step = options.roundingMinutes ?? 15;
  const zone = options.timeZone;
  const excluded = { declined: 0, allDay: 0, skipped: 0 };
  /** Day → project → spans. */
  const days = new Map<number, Map<string | null, Span[]>>();
  for (const item of items) {
    if (item.projectId === 'skip') {
      excluded.skipped++;
      continue;
    }
    if (item.declined && !options.includeDeclined) {
      excluded.declined++;
      continue;
    }
    if (item.allDay && !options.includeAllDay) {
      excluded.allDay++;
      continue;
    }
    if (!(item.end > item.start)) {
      continue;
    }
    // Split at local midnights: time is counted on the day it happened.
    for (let day = dayOf(item.start, zone); ; day++) {
      const from = Math.max(item.start, startOfDay(day, zone));
      const to = Math.min(item.end, startOfDay(day + 1, zone));
      if (to > from) {
        const projects = days.get(day) ?? new Map<string | null, Span[]>();
        days.set(day, projects);
        const spans = projects.get(item.projectId) ?? [];
        projects.set(item.projectId, spans);
        spans.push([from, to]);
      }
      if (to >= item.end) {
        break;
      }
    }
  }

  const perDay = new Map<number, Map<string | null, Span[]>>();
  const overlaps: TimesheetOverlap[] = [];
  for (const [day, projects] of [...days].sort((a, b) => a[0] - b[0])) {
    const merged = new Map<string | null, Span[]>();
    for (const [projectId, spans] of projects) {
      merged.set(projectId, union(spans));
    }
    perDay.set(day, merged);
    const named = [...merged.keys()].filter((id): id is string => id !== null).sort();
    for (let i = 0; i < named.length; i++) {
      for (let j = i + 1; j < named.length; j++) {
        const a = named[i] as string;
        const b = named[j] as string;
        const ms = shared(merged.get(a) ?? [], merged.get(b) ?? []);
        if (ms > 0) {
          overlaps.push({
            date: formatDate(dateFromEpochDay(day)),
            projectIds: [a, b],
            minutes: ms / MINUTE,
          });
        }
      }
    }
  }

  const totalsMs = new Map<string | null, number>();
  const periods = new Map<string, Map<string | null, number>>();
  for (const [day, projects] of perDay) {
    const period =
      options.groupBy === 'day'
        ? formatDate(dateFromEpochDay(day))
        : options.groupBy === 'week'
          ? isoWeek(day)
          : '';
    const bucket = periods.get(period) ?? new Map<string | null, number>();
    periods.set(period, bucket);
    for (const [projectId, spans] of projects) {
      const ms = length(spans);
      bucket.set(projectId, (bucket.get(projectId) ?? 0) + ms);
      totalsMs.set(projectId, (totalsMs.get(projectId) ?? 0) + ms);
    }
  }

  const lines: TimesheetLine[] = [];
  for (const [period, bucket] of [...periods].sort((a, b) => a[0].localeCompare(b[0]))) {
    for (const [projectId, ms] of [...bucket].sort((a, b) => byProject(a[0], b[0]))) {
      lines.push(line(options.groupBy === 'project' ? undefined : period, projectId, ms, step));
    }
  }
  const totals = [...totalsMs]
    .sort((a, b) => byProject(a[0], b[0]))
    .map(([projectId, ms]) => {
      const { minutes, hours } = line(undefined, projectId, ms, step);
      return { projectId, minutes, hours };
    });
  return {
    timeZone: zone,
    groupBy: options.groupBy,
    roundingMinutes: step,
    lines,
    totals,
    overlaps,
    excluded,
  };
}

/** CSV quoting: a field with a comma, quote or line break is quoted, quotes doubled. */
function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** The timesheet as CSV (RFC 4180), with project names and clients instead of ids. */
export function timesheetCsv(
  sheet: Timesheet,
  projects: ReadonlyMap<string, { name: string; client?: string | null }>,
): string {
  const header =
    sheet.groupBy === 'project' ? ['project', 'client', 'hours'] : ['period', 'project', 'client', 'hours'];
  const rows = sheet.lines.map((entry) => {
    const project = entry.projectId === null ? undefined : projects.get(entry.projectId);
    const name = entry.projectId === null ? 'Unclassified' : (project?.name ?? entry.projectId);
    const fields = [name, project?.client ?? '', entry.hours.toFixed(2)];
    return sheet.groupBy === 'project' ? fields : [entry.period ?? '', ...fields];
  });
  return `${[header, ...rows].map((row) => row.map(csvField).join(',')).join('\r\n')}\r\n`;
}

/** Days of a range in a zone, for callers that label empty days too. */
export function localDays(timeMin: number, timeMax: number, zone: string): string[] {
  const out: string[] = [];
  let date = dateFromEpochDay(dayOf(timeMin, zone));
  const last = dayOf(timeMax - 1, zone);
  while (epochDay(date.year, date.month, date.day) <= last) {
    out.push(formatDate(date));
    date = addDays(date, 1);
  }
  return out;
}
