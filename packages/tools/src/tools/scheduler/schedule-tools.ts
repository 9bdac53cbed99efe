import { CalgateError } from '@calgate/core';
import { compileQuery } from '@calgate/rules';
import { z } from 'zod';
import type { CalendarAccess } from '../../access.ts';
import { defineTool } from '../../catalogue.ts';
import { MAX_EVENT_OFFSET_MINUTES } from '../../event-schedule.ts';
import { instantIn, timeZoneArg } from '../../local-time.ts';
import { timeZoneIn } from '../../write-schemas.ts';
import {
  agentIdIn,
  CREATES,
  createdOut,
  endAtIn,
  exactIn,
  maxRepetitionsIn,
  promptIn,
  scheduleWith,
  scheduleZone,
  targetIdIn,
  timeZoneDescription,
} from './common.ts';

const LOCAL_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;

const EXAMPLE_TARGET = 'tgt_01JQ9A2H7PXN3MB5VW8KQRTCZD';

export const schedulePromptAt = defineTool({
  name: 'schedule_prompt_at',
  toolset: 'scheduler',
  title: 'Schedule a prompt once',
  description: 'Schedules a prompt delivered to you once.',
  access: 'none',
  annotations: CREATES,
  input: z.strictObject({
    prompt: promptIn,
    at: instantIn.describe('e.g. 2026-12-01T09:00:00+01:00; no offset: in timeZone'),
    timeZone: timeZoneArg,
    targetId: targetIdIn,
    agentId: agentIdIn,
  }),
  output: createdOut,
  exampleIntent: 'Remind me once, tomorrow at 9 am, to send the report.',
  example: {
    prompt: 'Check whether Dana replied about the contract; if not, draft a reminder.',
    at: '2030-01-07T09:00:00',
    timeZone: 'Europe/Berlin',
    targetId: EXAMPLE_TARGET,
  },
  exampleResult: {
    kind: 'once',
    status: 'active',
    timeZone: 'Europe/Berlin',
    nextRun: '2030-01-07T09:00:00+01:00',
    upcoming: ['2030-01-07T09:00:00+01:00'],
  },
  async run(args, context) {
    const zone = scheduleZone(context, args.timeZone);
    return scheduleWith(context, args, { kind: 'once', at: exactIn(args.at, zone) }, zone);
  },
});

export const schedulePromptCron = defineTool({
  name: 'schedule_prompt_cron',
  toolset: 'scheduler',
  title: 'Schedule a prompt by cron',
  description:
    'Delivers a prompt on a 5-field cron (minute hour day month weekday; names like MON-FRI, JAN ok) read in timeZone. DST as Unix cron: a skipped time runs after the gap, a repeated one once.',
  access: 'none',
  annotations: CREATES,
  input: z.strictObject({
    prompt: promptIn,
    cron: z.string().min(1).max(200).describe("e.g. '0 9 * * MON-FRI'"),
    timeZone: timeZoneIn.optional().describe(timeZoneDescription),
    targetId: targetIdIn,
    agentId: agentIdIn,
    maxRepetitions: maxRepetitionsIn,
    endAt: endAtIn,
  }),
  output: createdOut,
  exampleIntent: 'Prompt me at 9:00 on weekdays, with the cron expression 0 9 * * MON-FRI.',
  example: {
    prompt: "Summarise today's meetings and the open action items from yesterday.",
    cron: '0 9 * * MON-FRI',
    timeZone: 'Europe/Berlin',
    targetId: EXAMPLE_TARGET,
  },
  exampleResult: {
    kind: 'cron',
    description: 'cron 0 9 * * MON-FRI in Europe/Berlin',
    status: 'active',
    timeZone: 'Europe/Berlin',
  },
  async run(args, context) {
    const zone = scheduleZone(context, args.timeZone);
    return scheduleWith(context, args, { kind: 'cron', cron: args.cron, timeZone: args.timeZone }, zone);
  },
});

export const schedulePromptEvery = defineTool({
  name: 'schedule_prompt_every',
  toolset: 'scheduler',
  title: 'Schedule a prompt at an interval',
  description:
    'Delivers a prompt every so many minutes or hours (a fixed interval), first at startAt (RFC 3339) or one interval from now.',
  access: 'none',
  annotations: CREATES,
  input: z.strictObject({
    prompt: promptIn,
    every: z.string().min(1).max(64).describe("e.g. '30m', '4h', '1h30m', '2d'"),
    startAt: instantIn.optional(),
    timeZone: timeZoneArg,
    maxRepetitions: maxRepetitionsIn,
    endAt: endAtIn,
    targetId: targetIdIn,
    agentId: agentIdIn,
  }),
  output: createdOut,
  exampleIntent: 'Ping me every 2 hours to check the inbox.',
  example: {
    prompt: 'Check the deploy queue and report jobs stuck for more than an hour.',
    every: '4h',
    maxRepetitions: 6,
    targetId: EXAMPLE_TARGET,
  },
  exampleResult: { kind: 'interval', status: 'active', maxRepetitions: 6 },
  async run(args, context) {
    const zone = scheduleZone(context, args.timeZone);
    return scheduleWith(
      context,
      args,
      { kind: 'interval', every: args.every, startAt: exactIn(args.startAt, zone) },
      zone,
    );
  },
});

export const schedulePromptRrule = defineTool({
  name: 'schedule_prompt_rrule',
  toolset: 'scheduler',
  title: 'Schedule a prompt by RRULE',
  description: 'Delivers a prompt on a recurrence rule (RFC 5545 RRULE), from a local dtstart in timeZone.',
  access: 'none',
  annotations: CREATES,
  input: z.strictObject({
    prompt: promptIn,
    rrule: z.string().min(1).max(1000).describe("e.g. 'FREQ=MONTHLY;BYDAY=1MO'"),
    dtstart: z
      .string()
      .refine((value) => LOCAL_DATE_TIME.test(value), {
        message: 'must be a local date-time YYYY-MM-DDTHH:MM:SS without offset (the zone is timeZone)',
      })
      .describe('YYYY-MM-DDTHH:MM:SS, local.'),
    timeZone: timeZoneIn.optional().describe(timeZoneDescription),
    maxRepetitions: maxRepetitionsIn,
    endAt: endAtIn,
    targetId: targetIdIn,
    agentId: agentIdIn,
  }),
  output: createdOut,
  exampleIntent: 'Prompt me on a recurrence rule, FREQ=MONTHLY;BYDAY=FR;BYSETPOS=-1, to do the invoices.',
  example: {
    prompt: 'Prepare the agenda for the monthly review from last month’s notes.',
    rrule: 'FREQ=MONTHLY;BYDAY=1MO',
    dtstart: '2030-01-07T08:30:00',
    timeZone: 'Europe/Berlin',
    maxRepetitions: 12,
    targetId: EXAMPLE_TARGET,
  },
  exampleResult: {
    kind: 'rrule',
    timeZone: 'Europe/Berlin',
    nextRun: '2030-01-07T08:30:00+01:00',
    upcoming: ['2030-01-07T08:30:00+01:00', '2030-02-04T08:30:00+01:00'],
  },
  async run(args, context) {
    const zone = scheduleZone(context, args.timeZone);
    return scheduleWith(
      context,
      args,
      { kind: 'rrule', rrule: args.rrule, dtstart: args.dtstart, timeZone: args.timeZone },
      zone,
    );
  },
});

export const schedulePromptAroundEvents = defineTool({
  name: 'schedule_prompt_around_events',
  toolset: 'scheduler',
  title: 'Schedule a prompt around events',
  description:
    'Delivers a prompt offsetMinutes from the start of each event matching a rules query (syntax: resource calgate://docs/rules-syntax).',
  access: 'read',
  annotations: { ...CREATES, openWorldHint: true },
  input: z.strictObject({
    prompt: promptIn,
    query: z.string().min(1).max(10_000).describe("e.g. 'title:standup -response:declined'"),
    offsetMinutes: z
      .number()
      .int()
      .min(-MAX_EVENT_OFFSET_MINUTES)
      .max(MAX_EVENT_OFFSET_MINUTES)
      .describe('Negative: before the start.'),
    calendarIds: z
      .array(z.string().min(1).max(1024))
      .min(1)
      .max(50)
      .optional()
      .describe('Default: all readable.'),
    timeZone: timeZoneArg,
    targetId: targetIdIn,
    agentId: agentIdIn,
    maxRepetitions: maxRepetitionsIn,
    endAt: endAtIn,
  }),
  output: createdOut,
  exampleIntent: 'Send me a prompt 15 minutes before the start of each standup meeting.',
  example: {
    prompt: 'Brief me on the attendees of this meeting and our last exchanges with them.',
    query: 'has-attendees:yes -response:declined',
    offsetMinutes: -15,
    targetId: EXAMPLE_TARGET,
  },
  exampleResult: { kind: 'around_events', status: 'active' },
  async run(args, context) {
    const query = compileQuery(args.query);
    if (!query.ok) {
      throw query.error;
    }
    const zone = scheduleZone(context, args.timeZone);
    return scheduleWith(
      context,
      args,
      {
        kind: 'around_events',
        query: args.query,
        offsetMinutes: args.offsetMinutes,
        calendarIds: calendarIdsOf(context.access, args.calendarIds),
      },
      zone,
    );
  },
});

/**
 * The Calgate ids of the named calendars (names and `primary` work as elsewhere); one the key
 * cannot read is `not_found` like a missing one. A calendar whose account needs reconnecting is
 * kept: the schedule finds its events again once the account is back.
 */
function calendarIdsOf(access: CalendarAccess, ids: readonly string[] | undefined): string[] | undefined {
  if (ids === undefined) {
    return undefined;
  }
  const resolved = ids.map((id) => {
    try {
      return access.readable(id).calendar.id;
    } catch (error) {
      const calendarId = error instanceof CalgateError ? error.context.calendarId : undefined;
      if (error instanceof CalgateError && error.code === 'needs_reauth' && typeof calendarId === 'string') {
        return calendarId;
      }
      throw error;
    }
  });
  return [...new Set(resolved)];
}

export const SCHEDULE_TOOLS = [
  schedulePromptAt,
  schedulePromptCron,
  schedulePromptEvery,
  schedulePromptRrule,
  schedulePromptAroundEvents,
];
