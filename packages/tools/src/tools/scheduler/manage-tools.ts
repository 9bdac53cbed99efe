import { z } from 'zod';
import { defineTool } from '../../catalogue.ts';
import { timeZoneArg, timeZoneOut } from '../../local-time.ts';
import { listedOut, listedScheduleOut, READS, schedulerOf, scheduleZone } from './common.ts';

export const listScheduledPrompts = defineTool({
  name: 'list_scheduled_prompts',
  toolset: 'scheduler',
  title: 'List scheduled prompts',
  description: "This key's scheduled prompts with their next run and last delivery.",
  access: 'none',
  annotations: READS,
  input: z.strictObject({
    agentId: z.string().min(1).max(200).optional().describe("Only this agent's."),
    includeCancelled: z.boolean().default(false),
    timeZone: timeZoneArg,
  }),
  output: z.object({
    timeZone: timeZoneOut,
    schedules: z.array(listedOut),
  }),
  exampleIntent: 'Which scheduled prompts do I have, and when do they run next?',
  example: {},
  exampleResult: {
    schedules: [{ kind: 'cron', description: 'cron 0 9 * * MON-FRI in Europe/Berlin', status: 'active' }],
  },
  async run(args, context) {
    const zone = scheduleZone(context, args.timeZone);
    const schedules = await schedulerOf(context).list({
      agentId: args.agentId,
      includeCancelled: args.includeCancelled,
    });
    return { timeZone: zone, schedules: schedules.map((schedule) => listedScheduleOut(schedule, zone)) };
  },
});

export const cancelScheduledPrompt = defineTool({
  name: 'cancel_scheduled_prompt',
  toolset: 'scheduler',
  title: 'Cancel a scheduled prompt',
  description: 'Stops a scheduled prompt for good; cancelling it again changes nothing.',
  access: 'none',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  input: z.strictObject({ scheduleId: z.string().min(1).max(64).describe('From list_scheduled_prompts.') }),
  output: z.object({
    scheduleId: z.string(),
    status: z.string(),
    alreadyCancelled: z.boolean(),
    message: z.string(),
  }),
  exampleIntent: 'Stop that scheduled prompt for good.',
  example: { scheduleId: 'sch_01JQ9A3M5T8VK2RWX4NB6CDEFG' },
  exampleResult: { status: 'cancelled', alreadyCancelled: false },
  async run(args, context) {
    const { schedule, alreadyCancelled } = await schedulerOf(context).cancel(args.scheduleId);
    const message = alreadyCancelled
      ? `Scheduled prompt ${schedule.scheduleId} was already cancelled; nothing changed.`
      : `Cancelled scheduled prompt ${schedule.scheduleId} (${schedule.description}); it will not run again.`;
    return { scheduleId: schedule.scheduleId, status: schedule.status, alreadyCancelled, message };
  },
});

export const MANAGE_TOOLS = [listScheduledPrompts, cancelScheduledPrompt];
