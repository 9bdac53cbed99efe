import { CalgateError, formatInstant } from '@calgate/core';
import { z } from 'zod';
import type { ToolContext } from '../../catalogue.ts';
import { instantAt, instantIn } from '../../local-time.ts';
import { instantOut } from '../../range.ts';
import type {
  CreatedScheduledPrompt,
  NewScheduledPrompt,
  ScheduledPrompt,
  ScheduleInput,
} from '../../scheduler-services.ts';
import { parseRfc3339 } from '../../schemas.ts';
import { callZone } from '../availability/window.ts';

/** Reads of Calgate's own scheduler records. */
export const READS = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const;

/** Creating a schedule adds a record; nothing is sent until it runs. */
export const CREATES = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
} as const;

/** The scheduler services, or 'unavailable' where the gateway has none. */
export function schedulerOf(context: Pick<ToolContext, 'scheduler'>) {
  if (context.scheduler === undefined) {
    throw new CalgateError(
      'unavailable',
      'Scheduled prompts are not available on this gateway: it runs without the scheduler.',
    );
  }
  return context.scheduler;
}

/** An instant in the schedule's zone (cron, rrule), else UTC, as RFC 3339. */
export function timeOut(date: Date, zone: string | null): string {
  return formatInstant(date.getTime(), zone ?? 'UTC');
}

const nullableTimeOut = (date: Date | null, zone: string | null) =>
  date === null ? null : timeOut(date, zone);

// Inputs shared by the schedule_* tools. Limits of 1,000 or more are guards the JSON Schema leaves
// out; the service checks the exact ones (a prompt's 10,000 characters) with its own message.
export const promptIn = z.string().min(1).max(20_000).describe('Text delivered when it runs.');
export const targetIdIn = z
  .string()
  .min(1)
  .max(64)
  .optional()
  .describe('From list_delivery_targets; optional if there is one.');
export const agentIdIn = z
  .string()
  .min(1)
  .max(200)
  .optional()
  .describe("Letta agent; default from _meta, the key's or the target's.");
export const maxRepetitionsIn = z
  .number()
  .int()
  .min(1)
  .max(1_000_000)
  .optional()
  .describe('Stop after this many runs.');
export const endAtIn = instantIn.optional().describe('No run after it.');
export const timeZoneDescription = "IANA; default the key's.";

/** What the created, listed and cancelled schedules have in common. */
const scheduleFields = {
  scheduleId: z.string(),
  kind: z.enum(['once', 'cron', 'interval', 'rrule', 'around_events']),
  description: z.string(),
  status: z.enum(['active', 'paused', 'cancelled', 'finished']),
  nextRun: z.string().nullable(),
  nextRunReason: z.string().nullable(),
  timeZone: z.string().nullable(),
  targetId: z.string().nullable(),
  agentId: z.string().nullable(),
  maxRepetitions: z.number().nullable(),
  endAt: z.string().nullable(),
};

export const createdOut = z.object({ ...scheduleFields, upcoming: z.array(z.string()) });

export const listedOut = z.object({
  ...scheduleFields,
  prompt: z.string(),
  repetitionsDone: z.number(),
  createdAt: z.string(),
  lastDelivery: z
    .object({
      occurrence: z.string(),
      status: z.string(),
      attempt: z.number(),
      statusCode: z.number().nullable(),
      error: z.string().nullable(),
    })
    .nullable(),
});

/** A schedule's fields, its instants written in `written` (else its own zone, else UTC). */
function fieldsOut(schedule: ScheduledPrompt, written?: string) {
  const zone = written ?? schedule.timeZone;
  return {
    scheduleId: schedule.scheduleId,
    kind: schedule.kind,
    description: schedule.description,
    status: schedule.status,
    nextRun: nullableTimeOut(schedule.nextRun, zone),
    nextRunReason: schedule.nextRunReason,
    timeZone: schedule.timeZone,
    targetId: schedule.targetId,
    agentId: schedule.agentId,
    maxRepetitions: schedule.maxRepetitions,
    endAt: nullableTimeOut(schedule.endAt, zone),
  };
}

/**
 * A created schedule as its answer says it: instants in `written` (a cron's or rrule's own zone,
 * else the request's, else the key's), which is the answer's `timeZone`.
 */
export function createdScheduleOut(
  schedule: CreatedScheduledPrompt,
  written: string = schedule.timeZone ?? 'UTC',
): z.output<typeof createdOut> {
  return {
    ...fieldsOut(schedule, written),
    timeZone: written,
    upcoming: schedule.upcoming.map((run) => timeOut(run, written)),
  };
}

/** A listed schedule: instants in `written` (the list's zone); `timeZone` stays the schedule's own. */
export function listedScheduleOut(schedule: ScheduledPrompt, written?: string): z.output<typeof listedOut> {
  const zone = written ?? schedule.timeZone;
  const last = schedule.lastDelivery;
  return {
    ...fieldsOut(schedule, written),
    prompt: schedule.prompt,
    repetitionsDone: schedule.repetitionsDone,
    createdAt: timeOut(schedule.createdAt, zone),
    lastDelivery:
      last === null
        ? null
        : {
            occurrence: timeOut(last.occurrence, zone),
            status: last.status,
            attempt: last.attempt,
            statusCode: last.statusCode,
            error: last.error,
          },
  };
}

/** The arguments every schedule_* tool shares besides its schedule. */
export interface CommonArgs {
  prompt: string;
  targetId?: string | undefined;
  agentId?: string | undefined;
  maxRepetitions?: number | undefined;
  endAt?: string | undefined;
}

/**
 * The zone a schedule_* call reads local date-times in and answers in: the schedule's own
 * `timeZone` (cron, rrule) or the request's, else the key's.
 */
export function scheduleZone(context: Pick<ToolContext, 'access'>, requested: string | undefined): string {
  return callZone(context.access, requested, []);
}

/**
 * An instant argument as the scheduler service takes it: RFC 3339 with an offset as given (its
 * messages quote it), a local date-time (or one without seconds) read in `zone`.
 */
export function exactIn(text: string, zone: string): string;
export function exactIn(text: string | undefined, zone: string): string | undefined;
export function exactIn(text: string | undefined, zone: string): string | undefined {
  if (text === undefined || parseRfc3339(text) !== undefined) {
    return text;
  }
  return instantOut(instantAt(text, zone), zone);
}

/**
 * Asks the service for the schedule, with the request's `_meta` for finding the agent; local
 * date-times (endAt) are read in `zone`. The answer is written in the schedule's own zone (cron,
 * rrule: the service's default is the key's, as `zone`), else in `zone`.
 */
export async function scheduleWith(
  context: Pick<ToolContext, 'scheduler' | 'meta' | 'access'>,
  args: CommonArgs,
  schedule: ScheduleInput,
  zone: string,
): Promise<z.output<typeof createdOut>> {
  const scheduler = schedulerOf(context);
  const input: NewScheduledPrompt = {
    prompt: args.prompt,
    schedule,
    targetId: args.targetId,
    agentId: args.agentId,
    meta: context.meta,
    maxRepetitions: args.maxRepetitions,
    endAt: exactIn(args.endAt, zone),
  };
  const created = await scheduler.schedule(input);
  return createdScheduleOut(created, created.timeZone ?? zone);
}
