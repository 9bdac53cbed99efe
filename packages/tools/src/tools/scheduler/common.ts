import { CalgateError, formatInstant } from '@calgate/core';
import { z } from 'zod';
import type { ToolContext } from '../../catalogue.ts';
import type {
  CreatedScheduledPrompt,
  NewScheduledPrompt,
  ScheduledPrompt,
  ScheduleInput,
} from '../../scheduler-services.ts';
import { instant } from '../../schemas.ts';

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
export const endAtIn = instant.optional().describe('No run after it.');
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

function fieldsOut(schedule: ScheduledPrompt) {
  const zone = schedule.timeZone;
  return {
    scheduleId: schedule.scheduleId,
    kind: schedule.kind,
    description: schedule.description,
    status: schedule.status,
    nextRun: nullableTimeOut(schedule.nextRun, zone),
    nextRunReason: schedule.nextRunReason,
    timeZone: zone,
    targetId: schedule.targetId,
    agentId: schedule.agentId,
    maxRepetitions: schedule.maxRepetitions,
    endAt: nullableTimeOut(schedule.endAt, zone),
  };
}

export function createdScheduleOut(schedule: CreatedScheduledPrompt): z.output<typeof createdOut> {
  return {
    ...fieldsOut(schedule),
    upcoming: schedule.upcoming.map((run) => timeOut(run, schedule.timeZone)),
  };
}

export function listedScheduleOut(schedule: ScheduledPrompt): z.output<typeof listedOut> {
  const zone = schedule.timeZone;
  const last = schedule.lastDelivery;
  return {
    ...fieldsOut(schedule),
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

/** Asks the service for the schedule, with the request's `_meta` for finding the agent. */
export async function scheduleWith(
  context: Pick<ToolContext, 'scheduler' | 'meta'>,
  args: CommonArgs,
  schedule: ScheduleInput,
): Promise<z.output<typeof createdOut>> {
  const scheduler = schedulerOf(context);
  const input: NewScheduledPrompt = {
    prompt: args.prompt,
    schedule,
    targetId: args.targetId,
    agentId: args.agentId,
    meta: context.meta,
    maxRepetitions: args.maxRepetitions,
    endAt: args.endAt,
  };
  return createdScheduleOut(await scheduler.schedule(input));
}
