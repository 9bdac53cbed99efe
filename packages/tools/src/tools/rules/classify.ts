import { CalgateError, type ErrorCode } from '@calgate/core';
import { classify, prepareOccurrence } from '@calgate/rules';
import { z } from 'zod';
import type { RulesVerdict, ToolContext } from '../../catalogue.ts';
import { defineTool } from '../../catalogue.ts';
import { mapInSlices } from '../../cpu-turns.ts';
import { timeZoneOut } from '../../local-time.ts';
import { instantOut, rangeBound, windowIn } from '../../range.ts';
import { calendarErrors, calendarId } from '../../schemas.ts';
import { callZone } from '../availability/window.ts';
import { calendarIds } from '../read/common.ts';
import {
  filedAs,
  MAX_RULES_DAYS,
  occurrenceOf,
  projectIdOf,
  type ReadOccurrence,
  readOccurrences,
  rulesCalendars,
  rulesOf,
  scoringRules,
} from './common.ts';

/** Changes listed in one answer; the counts cover them all. */
const MAX_CHANGES = 100;

/** The occurrences classify_event files: the one event, or a series' occurrences in the window. */
async function occurrencesToFile(
  args: {
    calendarId: string;
    eventId: string;
    timeMin?: string | undefined;
    timeMax?: string | undefined;
    timeZone?: string | undefined;
  },
  context: Pick<ToolContext, 'access' | 'now' | 'signal'>,
): Promise<{ occurrences: ReadOccurrence[]; window?: { timeMin: string; timeMax: string } }> {
  const handle = context.access.readable(args.calendarId);
  const event = await handle.provider.getEvent(handle.ref, args.eventId, context.signal);
  const occurrence = event.status === 'cancelled' ? undefined : occurrenceOf(handle.calendar, event);
  if (occurrence === undefined) {
    throw new CalgateError(
      'not_found',
      `Event '${args.eventId}' has no time to file (cancelled or without a start).`,
    );
  }
  const isSeries = (event.recurrence?.length ?? 0) > 0 && event.recurringEventId === undefined;
  if (!isSeries) {
    return { occurrences: [occurrence] };
  }
  const named = event.summary === undefined ? '' : ` (${event.summary})`;
  if (args.timeMin === undefined || args.timeMax === undefined) {
    throw new CalgateError(
      'invalid_argument',
      `Event '${args.eventId}'${named} is a recurring series: give timeMin and timeMax to file each of its occurrences in that range (at most ${MAX_RULES_DAYS} days), or one occurrence's id (list_events gives them) to file just that one.`,
    );
  }
  const zone = callZone(context.access, args.timeZone, [handle]);
  const window = windowIn(args, zone, { now: context.now(), maxDays: MAX_RULES_DAYS });
  const span = { timeMin: instantOut(window.start, zone), timeMax: instantOut(window.end, zone) };
  const read = await readOccurrences([handle], window, context.signal);
  const failed = read.errors[0];
  if (failed !== undefined) {
    throw new CalgateError(failed.code as ErrorCode, failed.message);
  }
  const occurrences = read.occurrences.filter(({ event: one }) => one.recurringEventId === event.id);
  if (occurrences.length === 0) {
    throw new CalgateError(
      'not_found',
      `Series '${args.eventId}'${named} has no occurrence from ${span.timeMin} to ${span.timeMax}; nothing was filed.`,
    );
  }
  return { occurrences, window: span };
}

export const classifyEvent = defineTool({
  name: 'classify_event',
  toolset: 'rules',
  title: 'Classify an event',
  description:
    'Files an event occurrence into a project by hand, or skip: it is not time worked. Rules never change it. A series id files each of its occurrences from timeMin to timeMax (required then); filed says how many. Needs Read on its calendar.',
  access: 'write',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  input: z.strictObject({
    calendarId,
    eventId: z
      .string()
      .min(1)
      .max(1024)
      .describe("One occurrence's id, or a series id with timeMin and timeMax."),
    projectId: z.string().min(1).max(64).optional(),
    skip: z.literal(true).optional(),
    timeMin: rangeBound.optional().describe('For a series.'),
    timeMax: rangeBound.optional().describe('For a series.'),
    timeZone: z.string().min(1).max(64).optional(),
  }),
  output: z.object({
    calendarId: z.string(),
    eventId: z.string(),
    projectId: z.string().nullable(),
    skip: z.boolean(),
    source: z.literal('manual'),
    filed: z.number().describe('Occurrences filed.'),
    timeMin: z.string().optional(),
    timeMax: z.string().optional(),
  }),
  exampleIntent: 'File this meeting under the Acme project by hand.',
  example: { calendarId: 'primary', eventId: 'event1', skip: true },
  exampleResult: { eventId: 'event1', skip: true, source: 'manual', filed: 1 },
  async run(args, context) {
    if ((args.projectId === undefined) === (args.skip === undefined)) {
      throw new CalgateError('invalid_argument', 'Give either projectId or skip: true.');
    }
    const rules = rulesOf(context);
    const projectId = args.projectId === undefined ? undefined : await projectIdOf(rules, args.projectId);
    const { occurrences, window } = await occurrencesToFile(args, context);
    const filings = await rules.fileManually(
      occurrences.map((occurrence) => ({
        calendarId: occurrence.calendar.id,
        eventId: occurrence.event.id,
        start: new Date(occurrence.start),
        end: new Date(occurrence.end),
      })),
      projectId === undefined ? { skip: true } : { projectId },
    );
    const [filing] = filings;
    return {
      calendarId: (occurrences[0] as ReadOccurrence).calendar.id,
      eventId: window === undefined ? (occurrences[0] as ReadOccurrence).event.id : args.eventId,
      projectId: filing?.projectId ?? null,
      skip: filing?.skip ?? projectId === undefined,
      source: 'manual' as const,
      filed: filings.length,
      ...window,
    };
  },
});

export interface ApplyRequest {
  timeMin: string;
  timeMax: string;
  timeZone?: string | undefined;
  calendarIds?: readonly string[] | undefined;
}

/**
 * Files every occurrence in the range on the readable calendars (the named ones, or all) by the
 * enabled rules, keeping manual filings; apply_rules and the dashboard both answer with it.
 */
export async function applyRulesFor(
  args: ApplyRequest,
  context: Pick<ToolContext, 'access' | 'rules' | 'now' | 'signal'>,
) {
  const rules = rulesOf(context);
  const { handles, unavailable } = rulesCalendars(context.access, args.calendarIds);
  const zone = callZone(context.access, args.timeZone, handles);
  const window = windowIn(args, zone, { now: context.now(), maxDays: MAX_RULES_DAYS });
  const [voting, { occurrences, errors }] = await Promise.all([
    rules.votingRules().then(scoringRules),
    readOccurrences(handles, window, context.signal),
  ]);
  const counts = { classified: 0, needsReview: 0, pending: 0 };
  const summaries = new Map<string, string | undefined>();
  const verdicts: RulesVerdict[] = [];
  const results = await mapInSlices(occurrences, (occurrence) =>
    classify(prepareOccurrence(occurrence.rule), voting),
  );
  for (const [index, occurrence] of occurrences.entries()) {
    const result = results[index] as (typeof results)[number];
    counts[result.projectId === null ? 'pending' : result.needsReview ? 'needsReview' : 'classified'] += 1;
    summaries.set(`${occurrence.calendar.id}\u0000${occurrence.event.id}`, occurrence.event.summary);
    verdicts.push({
      calendarId: occurrence.calendar.id,
      eventId: occurrence.event.id,
      start: new Date(occurrence.start),
      end: new Date(occurrence.end),
      projectId: result.projectId,
      confidence: result.confidence,
      needsReview: result.needsReview,
      ruleIds: result.votes.flatMap((vote) => vote.ruleIds),
    });
  }
  const applied = await rules.applyVerdicts(verdicts);
  const failed = [...unavailable, ...errors];
  return {
    occurrences: occurrences.length,
    classified: counts.classified + counts.needsReview,
    needsReview: counts.needsReview,
    pending: counts.pending,
    created: applied.created,
    changed: applied.changed,
    unchanged: applied.unchanged,
    keptManual: applied.keptManual,
    changes: applied.changes.slice(0, MAX_CHANGES).map((change) => {
      const summary = summaries.get(`${change.calendarId}\u0000${change.eventId}`);
      return {
        calendarId: change.calendarId,
        eventId: change.eventId,
        ...(summary === undefined ? {} : { summary }),
        before: filedAs(change.before),
        after: filedAs(change.after),
        needsReview: change.after.needsReview,
      };
    }),
    changesTruncated: applied.changes.length > MAX_CHANGES,
    timeZone: zone,
    timeMin: instantOut(window.start, zone),
    timeMax: instantOut(window.end, zone),
    ...(failed.length === 0 ? {} : { errors: failed }),
  };
}

const filed = z.string().nullable().describe('Project id, skip, or null: pending.');

export const applyRules = defineTool({
  name: 'apply_rules',
  toolset: 'rules',
  title: 'Apply rules',
  description:
    'Runs the enabled rules over the events in a range of readable calendars and files each occurrence into a project (weighted votes; below 50 % or a tie: pending; below 80 %: needsReview). Manual filings are kept.',
  access: 'write',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  input: z.strictObject({
    timeMin: rangeBound,
    timeMax: rangeBound,
    timeZone: z.string().min(1).max(64).optional(),
    calendarIds,
  }),
  output: z.object({
    occurrences: z.number(),
    classified: z.number(),
    needsReview: z.number(),
    pending: z.number(),
    created: z.number(),
    changed: z.number(),
    unchanged: z.number(),
    keptManual: z.number(),
    changes: z.array(
      z.object({
        calendarId: z.string(),
        eventId: z.string(),
        summary: z.string().optional(),
        before: filed,
        after: filed,
        needsReview: z.boolean(),
      }),
    ),
    changesTruncated: z.boolean(),
    timeZone: timeZoneOut,
    timeMin: z.string(),
    timeMax: z.string(),
    errors: calendarErrors,
  }),
  exampleIntent: "Run the rules over last month's events and file them into projects.",
  example: { timeMin: '2026-04-01', timeMax: '2026-04-30' },
  exampleResult: { keptManual: 0, changes: [{ eventId: 'abc123def456', before: null }] },
  run: (args, context) => applyRulesFor(args, context),
});
