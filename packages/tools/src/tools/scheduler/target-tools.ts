import { z } from 'zod';
import { defineTool } from '../../catalogue.ts';
import { timeZoneArg, timeZoneOut } from '../../local-time.ts';
import { READS, schedulerOf, scheduleZone, timeOut } from './common.ts';

const EXAMPLE_TARGET = 'tgt_01JQ9A2H7PXN3MB5VW8KQRTCZD';
const targetIdIn = z.string().min(1).max(64);

export const listDeliveryTargets = defineTool({
  name: 'list_delivery_targets',
  toolset: 'scheduler',
  title: 'List delivery targets',
  description: 'Where scheduled prompts can be delivered: webhooks and Letta servers, set up by the owner.',
  access: 'none',
  annotations: READS,
  input: z.strictObject({}),
  output: z.object({
    targets: z.array(
      z.object({
        targetId: z.string(),
        kind: z.enum(['webhook', 'letta']),
        name: z.string(),
        origin: z.string(),
        defaultAgentId: z.string().nullable(),
        disabled: z.boolean(),
        disabledReason: z.string().nullable(),
      }),
    ),
  }),
  exampleIntent: 'Where can scheduled prompts be delivered: which webhooks and Letta servers?',
  example: {},
  exampleResult: { targets: [{ kind: 'webhook', name: 'Ops webhook', disabled: false }] },
  async run(_args, context) {
    // Field by field: whatever else the service knows of a target (its URL, its secret) stays there.
    const targets = await schedulerOf(context).targets();
    return {
      targets: targets.map((target) => ({
        targetId: target.targetId,
        kind: target.kind,
        name: target.name,
        origin: target.origin,
        defaultAgentId: target.defaultAgentId,
        disabled: target.disabled,
        disabledReason: target.disabledReason,
      })),
    };
  },
});

export const listLettaAgents = defineTool({
  name: 'list_letta_agents',
  toolset: 'scheduler',
  title: 'List Letta agents',
  description: "The agents a Letta target's server lets Calgate prompt (ids for agentId).",
  access: 'none',
  annotations: { ...READS, openWorldHint: true },
  input: z.strictObject({ targetId: targetIdIn.describe('A letta target.') }),
  output: z.object({ targetId: z.string(), agents: z.array(z.object({ id: z.string(), name: z.string() })) }),
  exampleIntent: 'Which Letta agents can Calgate prompt?',
  example: { targetId: 'tgt_01JQ9A4C8W2KTN5XRB7MVQ3HYP' },
  exampleResult: { agents: [{ name: 'Assistant' }] },
  async run(args, context) {
    const agents = await schedulerOf(context).lettaAgents(args.targetId);
    return { targetId: args.targetId, agents: agents.map((agent) => ({ id: agent.id, name: agent.name })) };
  },
});

export const testDeliveryTarget = defineTool({
  name: 'test_delivery_target',
  toolset: 'scheduler',
  title: 'Test a delivery target',
  description:
    'Checks a target now: a signed target.test event to a webhook, an agent listing on Letta. Schedules nothing.',
  access: 'none',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  input: z.strictObject({ targetId: targetIdIn.optional().describe('Optional if there is one.') }),
  output: z.object({
    targetId: z.string(),
    ok: z.boolean(),
    status: z.number().nullable(),
    durationMs: z.number(),
    error: z.string().nullable(),
  }),
  exampleIntent: 'Check now that the webhook target works.',
  example: { targetId: EXAMPLE_TARGET },
  exampleResult: { ok: true, status: 200, error: null },
  async run(args, context) {
    const result = await schedulerOf(context).testTarget(args.targetId);
    return {
      targetId: result.targetId,
      ok: result.ok,
      status: result.status,
      durationMs: result.durationMs,
      error: result.error,
    };
  },
});

export const schedulerStatus = defineTool({
  name: 'scheduler_status',
  toolset: 'scheduler',
  title: 'Scheduler status',
  description: "Whether scheduled prompts are being delivered: workers, backlog, this tenant's last 24 h.",
  access: 'none',
  annotations: READS,
  input: z.strictObject({
    timeZone: timeZoneArg,
  }),
  output: z.object({
    timeZone: timeZoneOut,
    workers: z.array(z.object({ name: z.string(), host: z.string(), lastSeen: z.string() })),
    queueDepth: z.number(),
    lagSeconds: z.number(),
    last24h: z.object({
      delivered: z.number(),
      failed: z.number(),
      missed: z.number(),
      retrying: z.number(),
      blocked: z.number(),
    }),
    recentFailures: z.array(
      z.object({ scheduleId: z.string(), occurrence: z.string(), error: z.string().nullable() }),
    ),
  }),
  exampleIntent: 'Are scheduled prompts being delivered, and is there a backlog?',
  example: {},
  exampleResult: { last24h: { failed: 0, missed: 0 } },
  async run(args, context) {
    const zone = scheduleZone(context, args.timeZone);
    const status = await schedulerOf(context).status();
    return {
      timeZone: zone,
      workers: status.workers.map((worker) => ({
        name: worker.name,
        host: worker.host,
        lastSeen: timeOut(worker.lastSeen, zone),
      })),
      queueDepth: status.queueDepth,
      lagSeconds: status.lagSeconds,
      last24h: {
        delivered: status.last24h.delivered,
        failed: status.last24h.failed,
        missed: status.last24h.missed,
        retrying: status.last24h.retrying,
        blocked: status.last24h.blocked,
      },
      recentFailures: status.recentFailures.map((failure) => ({
        scheduleId: failure.scheduleId,
        occurrence: timeOut(failure.occurrence, zone),
        error: failure.error,
      })),
    };
  },
});

export const TARGET_TOOLS = [listDeliveryTargets, listLettaAgents, testDeliveryTarget, schedulerStatus];
