import { CalgateError } from '@calgate/core';
import type { Scheduling } from '@calgate/scheduler';
import type {
  ApiKeyRepository,
  DeliveryRecord,
  ScheduleRecord,
  SchedulerRepository,
  TargetRecord,
} from '@calgate/store';
import type { SchedulerStatusInfo } from '@calgate/tools';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { describeSpec, promptOut, type SchedulerDeps, schedulerStatus } from '../../scheduler.ts';
import { parse } from './deps.ts';
import type { DashboardGuard } from './guard.ts';
import { registerTargetRoutes, targetView } from './scheduler-targets.ts';

/** What the Delivery targets, Schedules and Delivery log pages need. */
export interface SchedulerApiDeps {
  guard: DashboardGuard;
  keys: ApiKeyRepository;
  schedulerRepository: SchedulerRepository;
  /** Cancel, pause, resume (re-queues) and replay go through the engine, never the bare store. */
  scheduling: Scheduling;
  /** Workers alive, the queue's depth and lag, and this tenant's outcomes (see {@link tenantSchedulerStatus}). */
  schedulerStatus(tenantId: string): Promise<TenantSchedulerStatus>;
  /** `OUTBOUND_ALLOW_PRIVATE` (alias `TARGETS_ALLOW_PRIVATE`): targets may resolve to loopback and private addresses. */
  allowPrivateTargets: boolean;
}

export type TenantSchedulerStatus = Omit<SchedulerStatusInfo, 'recentFailures'>;

/**
 * The scheduler's state for the tenant's owner: workers, queue and the tenant's 24-hour outcome
 * counts. The tools' recent failures are one key's own; the Delivery log lists every key's.
 */
export async function tenantSchedulerStatus(
  deps: Pick<SchedulerDeps, 'db' | 'boss'>,
  tenantId: string,
): Promise<TenantSchedulerStatus> {
  const { recentFailures: _, ...status } = await schedulerStatus(deps, tenantId, '');
  return status;
}

/** Deliveries shown with each schedule; the Delivery log pages through the rest. */
const RECENT_DELIVERIES = 10;
const STATUSES = ['pending', 'delivered', 'failed', 'missed', 'retrying', 'blocked'] as const;

const IdParams = z.strictObject({ id: z.string().min(1).max(64) });
const OccurrenceParams = z.strictObject({ occurrenceId: z.string().min(1).max(200) });
const SchedulesQuery = z.strictObject({ includeCancelled: z.enum(['true', 'false']).optional() });
const DeliveriesQuery = z.strictObject({
  status: z.enum(STATUSES, { message: `status must be one of ${STATUSES.join(', ')}` }).optional(),
  limit: z.coerce.number().int().min(1).max(200, { message: 'limit is at most 200' }).default(50),
  before: z
    .string()
    .regex(/^\d{1,15}-\d{1,19}$/, { message: 'before is the nextCursor of the previous page' })
    .optional(),
});

/** One occurrence and how its delivery went; `occurrenceId` is the `webhook-id` of every attempt. */
export function deliveryView(delivery: DeliveryRecord) {
  return {
    occurrenceId: delivery.occurrenceId,
    scheduleId: delivery.scheduleId,
    occurrenceAt: delivery.occurrenceAt,
    attempt: delivery.attempt,
    status: delivery.status,
    statusCode: delivery.statusCode,
    error: delivery.error,
    deliveredAt: delivery.deliveredAt,
    createdAt: delivery.createdAt,
    repetition: delivery.repetition,
    event: delivery.event,
  };
}

function cursorOf(delivery: DeliveryRecord): string {
  return `${delivery.createdAt.getTime()}-${delivery.id}`;
}

/** The dashboard sees every key's schedules, so a missing one is missing from the tenant. */
async function inTenant<T>(scheduleId: string, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof CalgateError && error.code === 'not_found') {
      throw new CalgateError('not_found', `No scheduled prompt ${scheduleId} in this tenant.`);
    }
    throw error;
  }
}

/**
 * Delivery targets, every key's schedules with their recent deliveries, and the tenant's delivery
 * log, for the dashboard's scheduler pages.
 */
export function registerSchedulerRoutes(app: FastifyInstance, deps: SchedulerApiDeps): void {
  const { schedules, deliveries, targets } = deps.schedulerRepository;
  const { scheduling } = deps;

  async function scheduleViews(tenantId: string, list: readonly ScheduleRecord[]) {
    const [keys, allTargets, recent] = await Promise.all([
      deps.keys.list(tenantId),
      targets.list(tenantId),
      deliveries.recentBySchedules(
        tenantId,
        list.map((one) => one.id),
        RECENT_DELIVERIES,
      ),
    ]);
    const keyNames = new Map(keys.map((key) => [key.id, key.name]));
    const targetsById = new Map<string, TargetRecord>(allTargets.map((target) => [target.id, target]));
    return list.map((schedule) => {
      const last = recent.get(schedule.id) ?? [];
      const target = schedule.targetId === null ? undefined : targetsById.get(schedule.targetId);
      return {
        ...promptOut(schedule, last[0]),
        keyId: schedule.keyId,
        keyName: keyNames.get(schedule.keyId) ?? null,
        target: target === undefined ? null : targetView(target),
        recentDeliveries: last.map(deliveryView),
      };
    });
  }

  async function oneView(tenantId: string, schedule: ScheduleRecord) {
    const [view] = await scheduleViews(tenantId, [schedule]);
    return view;
  }

  registerTargetRoutes(app, deps);

  app.get('/api/v1/schedules', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    const { includeCancelled } = parse(SchedulesQuery, request.query);
    const [list, scheduler] = await Promise.all([
      schedules.list(tenantId, { includeCancelled: includeCancelled === 'true' }),
      deps.schedulerStatus(tenantId),
    ]);
    // Newest first: the schedule an agent just made is the one a person looks for.
    return { schedules: await scheduleViews(tenantId, [...list].reverse()), scheduler };
  });

  app.post('/api/v1/schedules/:id/cancel', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    const { id } = parse(IdParams, request.params);
    const outcome = await inTenant(id, scheduling.cancel(tenantId, id));
    return {
      schedule: await oneView(tenantId, outcome.schedule),
      alreadyCancelled: outcome.alreadyCancelled,
    };
  });

  app.post('/api/v1/schedules/:id/pause', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    const { id } = parse(IdParams, request.params);
    return { schedule: await oneView(tenantId, await inTenant(id, scheduling.pause(tenantId, id))) };
  });

  app.post('/api/v1/schedules/:id/resume', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    const { id } = parse(IdParams, request.params);
    return { schedule: await oneView(tenantId, await inTenant(id, scheduling.resume(tenantId, id))) };
  });

  app.get('/api/v1/deliveries', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    const query = parse(DeliveriesQuery, request.query);
    const [createdAt, id] = query.before?.split('-') ?? [];
    const [page, all] = await Promise.all([
      deliveries.listByTenant(tenantId, {
        limit: query.limit,
        ...(query.status === undefined ? {} : { status: query.status }),
        ...(createdAt === undefined || id === undefined
          ? {}
          : { before: { createdAt: new Date(Number(createdAt)), id } }),
      }),
      schedules.list(tenantId, { includeCancelled: true }),
    ]);
    const byId = new Map(all.map((schedule) => [schedule.id, schedule]));
    const last = page.at(-1);
    return {
      deliveries: page.map((delivery) => {
        const schedule = byId.get(delivery.scheduleId);
        return {
          ...deliveryView(delivery),
          schedule:
            schedule === undefined
              ? null
              : { id: schedule.id, description: describeSpec(schedule.spec), status: schedule.status },
        };
      }),
      nextCursor: page.length === query.limit && last !== undefined ? cursorOf(last) : null,
    };
  });

  /** Delivers a settled occurrence again with the same webhook-id: a retry of a failure, a replay of a success. */
  app.post('/api/v1/deliveries/:occurrenceId/replay', async (request, reply) => {
    const { tenantId } = await deps.guard.session(request);
    const { occurrenceId } = parse(OccurrenceParams, request.params);
    const found = await deliveries.get(tenantId, occurrenceId);
    if (found === null) {
      throw new CalgateError('not_found', `No delivery ${occurrenceId} in this tenant.`);
    }
    if (found.status === 'pending' || found.status === 'retrying') {
      throw new CalgateError(
        'precondition_failed',
        `Delivery ${occurrenceId} is still being attempted (${found.status}, attempt ${found.attempt}); retry it once it has delivered or failed.`,
      );
    }
    await scheduling.replay(tenantId, occurrenceId);
    reply.status(202);
    const now = await deliveries.get(tenantId, occurrenceId);
    return { replayed: occurrenceId, delivery: deliveryView(now ?? found) };
  });
}
