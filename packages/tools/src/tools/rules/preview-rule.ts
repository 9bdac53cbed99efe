import { CalgateError } from '@calgate/core';
import { classify, prepareOccurrence } from '@calgate/rules';
import { z } from 'zod';
import { defineTool, type ToolContext } from '../../catalogue.ts';
import { mapInSlices } from '../../cpu-turns.ts';
import { timeZoneOut } from '../../local-time.ts';
import { instantOut, rangeBound, windowIn } from '../../range.ts';
import { calendarErrors } from '../../schemas.ts';
import { callZone } from '../availability/window.ts';
import { calendarIds } from '../read/common.ts';
import {
  CALENDAR_READS,
  compiled,
  filedAs,
  filingsOf,
  MAX_RULES_DAYS,
  occurrenceKey,
  projectNames,
  readOccurrences,
  rulesCalendars,
  rulesOf,
  SYNTAX_POINTER,
  scoringRules,
  timeOut,
} from './common.ts';

export interface PreviewRequest {
  query: string;
  projectId?: string | undefined;
  /** The previewed rule's weight when it votes for conflicts; default 1. */
  weight?: number | undefined;
  /** A stored rule this query would replace: it does not vote beside it. */
  replacesRuleId?: string | undefined;
  timeMin?: string | undefined;
  timeMax?: string | undefined;
  timeZone?: string | undefined;
  calendarIds?: readonly string[] | undefined;
  maxResults: number;
}

/**
 * What a rule query matches among the occurrences of the readable calendars (the named ones, or
 * all), and the matches already filed elsewhere; with `projectId`, what the rules would decide
 * for each of those once this rule is saved. preview_rule and the dashboard both answer with it.
 */
export async function previewRuleFor(
  args: PreviewRequest,
  context: Pick<ToolContext, 'access' | 'rules' | 'now' | 'signal'>,
) {
  const query = compiled(args.query);
  const rules = rulesOf(context);
  if (args.projectId !== undefined && !(await projectNames(rules)).has(args.projectId)) {
    throw new CalgateError('not_found', `No project ${args.projectId} in this tenant; see list_projects.`);
  }
  const { handles, unavailable } = rulesCalendars(context.access, args.calendarIds);
  const zone = callZone(context.access, args.timeZone, handles);
  const window = windowIn(args, zone, { now: context.now(), beforeDays: 30, maxDays: MAX_RULES_DAYS });
  const { occurrences, errors } = await readOccurrences(handles, window, context.signal);
  const evaluated = await mapInSlices(occurrences, (occurrence) => {
    const prepared = prepareOccurrence(occurrence.rule);
    return { occurrence, prepared, matches: query.matches(prepared) };
  });
  const matched = evaluated.filter((entry) => entry.matches);
  const filings = await filingsOf(
    rules,
    matched.map(({ occurrence }) => occurrence),
  );
  const voting =
    args.projectId === undefined
      ? []
      : [
          ...scoringRules(await rules.votingRules()).filter((rule) => rule.id !== args.replacesRuleId),
          { id: 'preview', projectId: args.projectId, weight: args.weight ?? 1, query },
        ];
  const conflicts = matched.flatMap(({ occurrence, prepared }) => {
    const filing = filings.get(occurrenceKey(occurrence.calendar.id, occurrence.event.id));
    const current = filedAs(filing);
    if (filing === undefined || current === null || current === args.projectId) {
      return [];
    }
    const proposed =
      args.projectId === undefined
        ? {}
        : { proposedProject: filing.source === 'manual' ? current : classify(prepared, voting).projectId };
    return [
      {
        calendarId: occurrence.calendar.id,
        eventId: occurrence.event.id,
        currentProject: current,
        currentSource: filing.source,
        ...proposed,
      },
    ];
  });
  const failed = [...unavailable, ...errors];
  return {
    timeZone: zone,
    matches: matched.slice(0, args.maxResults).map(({ occurrence: { calendar, event, start, end } }) => ({
      calendarId: calendar.id,
      eventId: event.id,
      ...(event.summary === undefined ? {} : { summary: event.summary }),
      start: timeOut(event.start, start, zone),
      end: timeOut(event.end, end, zone),
    })),
    matchCount: matched.length,
    truncated: matched.length > args.maxResults,
    conflicts: conflicts.slice(0, args.maxResults),
    conflictCount: conflicts.length,
    timeMin: instantOut(window.start, zone),
    timeMax: instantOut(window.end, zone),
    ...(failed.length === 0 ? {} : { errors: failed }),
  };
}

const time = z.object({ dateTime: z.string().optional(), date: z.string().optional() });

export const previewRule = defineTool({
  name: 'preview_rule',
  toolset: 'rules',
  title: 'Preview a rule',
  description: `Events a rule query matches (occurrences of readable calendars), before saving it, and the matches already filed into another project (conflicts). Default range: the last 30 days. ${SYNTAX_POINTER}`,
  access: 'read',
  annotations: CALENDAR_READS,
  input: z.strictObject({
    query: z.string().min(1).max(100_000),
    projectId: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe("The rule's project: conflicts then show what rules would decide."),
    timeMin: rangeBound.optional(),
    timeMax: rangeBound.optional(),
    timeZone: z.string().min(1).max(64).optional(),
    calendarIds,
    maxResults: z.number().int().min(1).max(2500).default(25),
  }),
  output: z.object({
    timeZone: timeZoneOut,
    matches: z.array(
      z.object({
        calendarId: z.string(),
        eventId: z.string(),
        summary: z.string().optional(),
        start: time,
        end: time,
      }),
    ),
    matchCount: z.number(),
    truncated: z.boolean(),
    conflicts: z.array(
      z.object({
        calendarId: z.string(),
        eventId: z.string(),
        currentProject: z.string().describe('Project id or skip.'),
        currentSource: z.enum(['rule', 'manual']),
        proposedProject: z
          .string()
          .nullable()
          .optional()
          .describe('After applying rules with this one; null: pending.'),
      }),
    ),
    conflictCount: z.number(),
    timeMin: z.string(),
    timeMax: z.string(),
    errors: calendarErrors,
  }),
  example: {
    query: 'title:"quarterly review" OR domain:example.com',
    timeMin: '2026-04-01',
    timeMax: '2026-04-30',
  },
  exampleResult: {
    matches: [{ summary: 'Team Standup' }, { eventId: 'abc123def456', summary: 'Quarterly review' }],
    matchCount: 2,
    truncated: false,
  },
  run: (args, context) => previewRuleFor(args, context),
});
