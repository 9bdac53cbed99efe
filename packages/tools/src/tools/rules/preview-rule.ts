import { CalgateError } from '@calgate/core';
import { type CompiledQuery, classify, prepareOccurrence } from '@calgate/rules';
import { z } from 'zod';
import { defineTool, type ToolContext } from '../../catalogue.ts';
import { mapInSlices } from '../../cpu-turns.ts';
import { timeZoneOut } from '../../local-time.ts';
import { DAY_MS, instantOut, rangeBound, type Window, windowIn } from '../../range.ts';
import { calendarErrors } from '../../schemas.ts';
import { callZone } from '../availability/window.ts';
import { calendarIds, readableHandles } from '../read/common.ts';
import {
  CALENDAR_READS,
  compiled,
  filedAs,
  filingsOf,
  MAX_RULES_DAYS,
  OPERATORS,
  occurrenceKey,
  projectIdOf,
  readOccurrences,
  rulesCalendars,
  rulesOf,
  SYNTAX_POINTER,
  scoringRules,
  timeOut,
} from './common.ts';

/** What answers about a rule warn of: it matched nothing, or it could not be tried on events. */
export const ruleWarnings = z
  .array(z.object({ kind: z.enum(['no_matches', 'not_previewed']), message: z.string() }))
  .optional()
  .describe('Present when the query matched no event in the window looked at, or was not tried.');

export type RuleWarning = NonNullable<z.infer<typeof ruleWarnings>>[number];

/** The warning for a query that matched no occurrence of `calendars` calendars in the window. */
function noMatches(window: Window, zone: string, calendars: number): RuleWarning {
  return {
    kind: 'no_matches',
    message: `The query matches no event from ${instantOut(window.start, zone)} to ${instantOut(window.end, zone)} on the ${calendars === 1 ? 'calendar' : `${calendars} calendars`} read, so a rule with it files nothing there. Check its words (every condition must hold unless joined by OR), or preview another range with preview_rule.`,
  };
}

/** The answer's text: each warning as a sentence of its own, then the JSON. */
export function warnedText(result: { warnings?: readonly RuleWarning[] | undefined }): string {
  const json = JSON.stringify(result);
  const warnings = result.warnings ?? [];
  return warnings.length === 0 ? json : `${warnings.map((w) => `Warning: ${w.message}`).join('\n')}\n${json}`;
}

/** How many days either side of now create_rule and update_rule try a query on. */
export const CHECK_DAYS = 30;

export const rulePreview = z
  .object({ matchCount: z.number(), timeMin: z.string(), timeMax: z.string() })
  .optional()
  .describe(`Matches ${CHECK_DAYS} days either side of now on readable calendars.`);

/**
 * What a query about to be saved matches from CHECK_DAYS days ago to CHECK_DAYS days ahead on
 * every calendar the key can read, with a warning when that is nothing. Calendars that cannot be
 * read make a warning, not a failure: the rule is saved all the same.
 */
export async function tryRule(
  query: CompiledQuery,
  context: Pick<ToolContext, 'access' | 'now' | 'signal'>,
): Promise<{ preview?: z.infer<typeof rulePreview>; warnings?: RuleWarning[] }> {
  const notPreviewed = (why: string) => ({
    warnings: [{ kind: 'not_previewed' as const, message: `The query was not tried on any event: ${why}` }],
  });
  const { handles } = readableHandles(context.access, undefined);
  if (handles.length === 0) {
    return notPreviewed('this key can read no calendar right now.');
  }
  const zone = callZone(context.access, undefined, handles);
  const now = context.now().getTime();
  const window = { start: now - CHECK_DAYS * DAY_MS, end: now + CHECK_DAYS * DAY_MS };
  let read: Awaited<ReturnType<typeof readOccurrences>>;
  try {
    read = await readOccurrences(handles, window, context.signal);
  } catch (error) {
    if (error instanceof CalgateError && !context.signal.aborted) {
      return notPreviewed(error.message);
    }
    throw error;
  }
  const hits = await mapInSlices(read.occurrences, (occurrence) => query.matches(occurrence.rule));
  const matchCount = hits.filter(Boolean).length;
  const preview = {
    matchCount,
    timeMin: instantOut(window.start, zone),
    timeMax: instantOut(window.end, zone),
  };
  return matchCount === 0 ? { preview, warnings: [noMatches(window, zone, handles.length)] } : { preview };
}

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
  if (args.projectId !== undefined) {
    await projectIdOf(rules, args.projectId);
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
    ...(matched.length === 0 ? { warnings: [noMatches(window, zone, handles.length)] } : {}),
  };
}

const time = z.object({ dateTime: z.string().optional(), date: z.string().optional() });

export const previewRule = defineTool({
  name: 'preview_rule',
  toolset: 'rules',
  title: 'Preview a rule',
  description: `Events a rule query matches (occurrences of readable calendars), before saving it, and the matches already filed into another project (conflicts). Default range: the last 30 days. ${OPERATORS} No match: warnings says so. ${SYNTAX_POINTER}`,
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
    warnings: ruleWarnings,
  }),
  exampleIntent: 'Before saving it, show me which events a rule for acme.com meetings would match.',
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
  text: warnedText,
});
