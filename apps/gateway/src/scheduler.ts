/**
 * Scheduled prompts for the tools: one SchedulerServices per MCP request, bound to its key. Stores
 * and queues through the scheduler engine; a key sees and cancels only its own schedules.
 */
import { CalgateError, formatInstant, parseInstant } from '@calgate/core';
import {
  checkTargetUrl,
  createSchedule,
  formatInterval,
  listLettaAgents,
  nextRuns,
  resolveAgentId,
  type ScheduleSpec,
  Scheduling,
  testDeliveryTarget,
  validatePrompt,
} from '@calgate/scheduler';
import {
  type Database,
  type DeliveryRecord,
  type KeyAccess,
  loadKeyAccessById,
  type ScheduleRecord,
  type SchedulerRepository,
  type TargetRecord,
} from '@calgate/store';
import {
  CalendarAccess,
  type CreatedScheduledPrompt,
  checkEventSpec,
  EVENT_PLAN_HORIZON_MS,
  type EventScheduleSpec,
  type NewScheduledPrompt,
  noPlannedEventReason,
  type ProviderResolver,
  planEventOccurrences,
  type ScheduledPrompt,
  type SchedulerServices,
  type SchedulerStatusInfo,
} from '@calgate/tools';
import type { PgBoss } from 'pg-boss';
import { principalOf, type SchedulerFactory } from './http/mcp.ts';

export interface SchedulerDeps {
  db: Database;
  repository: SchedulerRepository;
  boss: PgBoss;
  providers: ProviderResolver;
  /** `OUTBOUND_ALLOW_PRIVATE` (alias `TARGETS_ALLOW_PRIVATE`). */
  allowPrivate: boolean;
  now?: () => number;
}

/** A stored event-relative spec. */
export interface AroundEventsSpec extends EventScheduleSpec {
  kind: 'around_events';
  maxRepetitions?: number;
  endAt?: number;
}

const UPCOMING = 5;

/** The key as the scheduler needs it: its calendars for zones and events, its default agent. */
export async function keyPrincipal(db: Database, tenantId: string, keyId: string): Promise<KeyAccess> {
  const key = await loadKeyAccessById(db, tenantId, keyId);
  if (key === null) {
    throw new CalgateError('not_found', `No API key ${keyId} in this tenant.`);
  }
  return key;
}

export function accessOf(key: KeyAccess, providers: ProviderResolver): CalendarAccess {
  return new CalendarAccess(principalOf(key), providers);
}

/** Scheme, host and port: a URL's path and query may hold a token. */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid URL)';
  }
}

export function describeSpec(spec: ScheduleRecord['spec']): string {
  const s = spec as unknown as ScheduleSpec | AroundEventsSpec;
  switch (s.kind) {
    case 'once':
      return `once at ${formatInstant(s.at)}`;
    case 'cron':
      return `cron ${s.cron} in ${s.timeZone}`;
    case 'interval':
      return `every ${formatInterval(s.everyMs)} from ${formatInstant(s.startAt)}`;
    case 'rrule':
      return `${s.rrule} from ${s.dtstart} in ${s.timeZone}`;
    case 'around_events': {
      const minutes = Math.abs(s.offsetMinutes);
      const when = s.offsetMinutes < 0 ? 'before' : s.offsetMinutes > 0 ? 'after' : 'at';
      return `${minutes === 0 ? '' : `${minutes} min `}${when} the start of each event matching ${s.query}`;
    }
  }
}

function zoneOf(spec: ScheduleRecord['spec']): string | null {
  return typeof spec.timeZone === 'string' ? spec.timeZone : null;
}

/** Why a schedule has no next run, in words an agent can relay; null when it has one. */
function nextRunReason(schedule: ScheduleRecord, nextRun: Date | null): string | null {
  if (nextRun !== null) {
    return null;
  }
  switch (schedule.status) {
    case 'paused':
      return 'paused; resume it to run again';
    case 'cancelled':
      return 'cancelled';
    case 'finished':
      return 'finished; no runs are left';
    case 'active': {
      const spec = schedule.spec as unknown as ScheduleSpec | AroundEventsSpec;
      return spec.kind === 'around_events' ? noPlannedEventReason(spec.query) : 'no runs are left';
    }
  }
}

export function promptOut(schedule: ScheduleRecord, last: DeliveryRecord | undefined): ScheduledPrompt {
  const spec = schedule.spec;
  const nextRun = schedule.status === 'active' ? schedule.nextRunAt : null;
  return {
    scheduleId: schedule.id,
    kind: spec.kind as ScheduledPrompt['kind'],
    description: describeSpec(spec),
    prompt: schedule.prompt,
    status: schedule.status,
    nextRun,
    nextRunReason: nextRunReason(schedule, nextRun),
    timeZone: zoneOf(spec),
    targetId: schedule.targetId,
    agentId: schedule.agentId,
    repetitionsDone: schedule.repetitionsDone,
    maxRepetitions: typeof spec.maxRepetitions === 'number' ? spec.maxRepetitions : null,
    endAt: typeof spec.endAt === 'number' ? new Date(spec.endAt) : null,
    createdAt: schedule.createdAt,
    lastDelivery:
      last === undefined
        ? null
        : {
            occurrence: last.occurrenceAt,
            status: last.status,
            attempt: last.attempt,
            statusCode: last.statusCode,
            error: last.error,
          },
  };
}

/** The target a call names, or the tenant's only one; refused when disabled. */
async function chooseTarget(repository: SchedulerRepository, tenantId: string, targetId: string | undefined) {
  let target: TargetRecord | null;
  if (targetId !== undefined) {
    target = await repository.targets.get(tenantId, targetId);
    if (target === null) {
      throw new CalgateError('not_found', `No delivery target ${targetId}; see list_delivery_targets.`);
    }
  } else {
    const all = await repository.targets.list(tenantId);
    if (all.length === 0) {
      throw new CalgateError(
        'precondition_failed',
        'This tenant has no delivery target yet; a person creates one in the dashboard (Delivery targets) or with `calgate target create`.',
      );
    }
    if (all.length > 1) {
      throw new CalgateError(
        'invalid_argument',
        `targetId is required: this tenant has ${all.length} delivery targets (${all
          .slice(0, 5)
          .map((t) => `${t.id} "${t.name}"`)
          .join(', ')}); see list_delivery_targets.`,
      );
    }
    target = all[0] as TargetRecord;
  }
  if (target.disabledAt !== null) {
    throw new CalgateError(
      'precondition_failed',
      `Delivery target ${target.id} is disabled (${target.disabledReason ?? 'by a person'}); a person re-enables it in the dashboard.`,
    );
  }
  return target;
}

/**
 * Refuses a target this gateway's URL policy refuses, as a delivery would: a prompt scheduled to
 * it could never arrive. A host that does not resolve right now passes (delivery retries DNS).
 */
async function refuseUnreachableTarget(target: TargetRecord, allowPrivate: boolean): Promise<void> {
  const checked = await checkTargetUrl(target.url, { allowPrivate });
  if (!checked.ok && !checked.error.retry) {
    throw new CalgateError(
      'precondition_failed',
      `Delivery target ${target.id} (${JSON.stringify(target.name)}) is refused by this Calgate's URL policy, so no prompt could reach it: ${checked.error.message}.`,
      { context: { targetId: target.id } },
    );
  }
}

/** `endAt` of a schedule around events: an instant after now, or none. */
function eventsEndAt(text: string | undefined, now: number): number | undefined {
  if (text === undefined) {
    return undefined;
  }
  const parsed = parseInstant(text);
  if (!parsed.ok) {
    throw new CalgateError('invalid_argument', `endAt: ${parsed.error.message}`);
  }
  if (parsed.value <= now) {
    throw new CalgateError(
      'invalid_argument',
      `endAt '${text}' is not in the future; give an instant after now, or leave endAt out.`,
    );
  }
  return parsed.value;
}

export function schedulerServices(deps: SchedulerDeps): SchedulerFactory {
  const now = deps.now ?? Date.now;
  const scheduling = new Scheduling(deps.boss, deps.repository, now);
  const { repository } = deps;

  return ({ tenantId, keyId }): SchedulerServices => {
    const scope = { keyId };

    async function lastDeliveries(ids: readonly string[]): Promise<Map<string, DeliveryRecord>> {
      const recent = await repository.deliveries.recentBySchedules(tenantId, ids, 1);
      return new Map([...recent].map(([id, [last]]) => [id, last as DeliveryRecord]));
    }

    async function schedule(input: NewScheduledPrompt): Promise<CreatedScheduledPrompt> {
      const prompt = validatePrompt(input.prompt);
      if (!prompt.ok) {
        throw prompt.error;
      }
      const key = await keyPrincipal(deps.db, tenantId, keyId);
      const target = await chooseTarget(repository, tenantId, input.targetId);
      await refuseUnreachableTarget(target, deps.allowPrivate);
      const agent = resolveAgentId({
        explicit: input.agentId,
        meta: input.meta,
        keyDefault: key.defaultAgentId,
        targetDefault: target.defaultAgentId,
      });
      if (target.kind === 'letta' && agent === undefined) {
        throw new CalgateError(
          'invalid_argument',
          `Delivery target ${target.id} is a Letta server and no agent is known: pass agentId (see list_letta_agents), or set a default agent on the key or the target.`,
        );
      }
      // The target's default is looked up at delivery, so changing it later takes effect.
      const agentId = agent === undefined || agent.source === 'target' ? null : agent.agentId;
      const access = accessOf(key, deps.providers);
      // The key's zone as every other tool reads it: its own, else the workspace's, else its default calendar's, else UTC.
      const zone = access.timeZone();
      const at = now();
      const request = input.schedule;

      if (request.kind === 'around_events') {
        const endAt = eventsEndAt(input.endAt, at);
        const spec: AroundEventsSpec = {
          kind: 'around_events',
          query: request.query,
          offsetMinutes: request.offsetMinutes,
          ...(request.calendarIds === undefined ? {} : { calendarIds: request.calendarIds }),
          ...(input.maxRepetitions === undefined ? {} : { maxRepetitions: input.maxRepetitions }),
          ...(endAt === undefined ? {} : { endAt }),
        };
        checkEventSpec(spec);
        if (
          input.maxRepetitions !== undefined &&
          !(Number.isInteger(input.maxRepetitions) && input.maxRepetitions >= 1)
        ) {
          throw new CalgateError(
            'invalid_argument',
            `maxRepetitions must be a whole number ≥ 1, got ${input.maxRepetitions}.`,
          );
        }
        const plans = await planEventOccurrences(
          access,
          spec,
          { from: at, to: at + EVENT_PLAN_HORIZON_MS },
          AbortSignal.timeout(30_000),
        );
        const inTime = plans.filter((plan) => endAt === undefined || plan.at <= endAt);
        const limited = input.maxRepetitions === undefined ? inTime : inTime.slice(0, input.maxRepetitions);
        const created = await scheduling.create(tenantId, {
          keyId,
          targetId: target.id,
          agentId,
          prompt: prompt.value,
          spec: spec as unknown as ScheduleRecord['spec'],
          // No matching event in the window: no next run (the sweep plans again every minute).
          nextRunAt: limited[0] === undefined ? null : new Date(limited[0].at),
        });
        await scheduling.queueEventOccurrences(created, limited);
        return {
          ...promptOut(created, undefined),
          upcoming: limited.slice(0, UPCOMING).map((plan) => new Date(plan.at)),
        };
      }

      const made = createSchedule(
        {
          ...(request.kind === 'once'
            ? { kind: 'once' as const, at: request.at }
            : request.kind === 'cron'
              ? { kind: 'cron' as const, cron: request.cron, timeZone: request.timeZone ?? zone }
              : request.kind === 'interval'
                ? {
                    kind: 'interval' as const,
                    every: request.every,
                    ...(request.startAt === undefined ? {} : { startAt: request.startAt }),
                  }
                : {
                    kind: 'rrule' as const,
                    rrule: request.rrule,
                    dtstart: request.dtstart,
                    timeZone: request.timeZone ?? zone,
                  }),
          ...(input.maxRepetitions === undefined ? {} : { maxRepetitions: input.maxRepetitions }),
          ...(input.endAt === undefined ? {} : { endAt: input.endAt }),
        },
        at,
      );
      if (!made.ok) {
        throw made.error;
      }
      const { schedule: compiled, firstRun } = made.value;
      const created = await scheduling.create(tenantId, {
        keyId,
        targetId: target.id,
        agentId,
        prompt: prompt.value,
        spec: compiled.spec as unknown as ScheduleRecord['spec'],
        nextRunAt: new Date(firstRun),
      });
      return {
        ...promptOut(created, undefined),
        upcoming: nextRuns(compiled, firstRun - 1, UPCOMING).map((run) => new Date(run)),
      };
    }

    return {
      schedule,

      async list(options) {
        const all = await repository.schedules.list(tenantId, {
          keyId,
          includeCancelled: options.includeCancelled === true,
        });
        const chosen =
          options.agentId === undefined ? all : all.filter((one) => one.agentId === options.agentId);
        const last = await lastDeliveries(chosen.map((one) => one.id));
        return chosen.map((one) => promptOut(one, last.get(one.id)));
      },

      async cancel(scheduleId) {
        const outcome = await scheduling.cancel(tenantId, scheduleId, scope);
        const last = await lastDeliveries([scheduleId]);
        return {
          schedule: promptOut(outcome.schedule, last.get(scheduleId)),
          alreadyCancelled: outcome.alreadyCancelled,
        };
      },

      async targets() {
        const all = await repository.targets.list(tenantId);
        return all.map((target) => ({
          targetId: target.id,
          kind: target.kind,
          name: target.name,
          origin: originOf(target.url),
          defaultAgentId: target.defaultAgentId,
          disabled: target.disabledAt !== null,
          disabledReason: target.disabledReason,
        }));
      },

      async lettaAgents(targetId) {
        const { target, secret } = await repository.targets.openSecret(tenantId, targetId);
        if (target.kind !== 'letta') {
          throw new CalgateError(
            'invalid_argument',
            `Delivery target ${targetId} is a webhook, not a Letta server.`,
          );
        }
        const listed = await listLettaAgents(
          { targetId, baseUrl: target.url, apiKey: secret.reveal() },
          { allowPrivate: deps.allowPrivate },
        );
        if (!listed.ok) {
          throw listed.error;
        }
        return listed.value;
      },

      async testTarget(targetId) {
        const chosen = await chooseTargetForTest(targetId);
        const { target, secret } = await repository.targets.openSecret(tenantId, chosen);
        return testDeliveryTarget(
          {
            id: target.id,
            kind: target.kind,
            url: target.url,
            secret: secret.reveal(),
            defaultAgentId: target.defaultAgentId,
          },
          { allowPrivate: deps.allowPrivate },
        );
      },

      status: () => schedulerStatus(deps, tenantId, keyId),
    };

    async function chooseTargetForTest(targetId: string | undefined): Promise<string> {
      if (targetId !== undefined) {
        return targetId;
      }
      const all = await repository.targets.list(tenantId);
      if (all.length !== 1) {
        throw new CalgateError(
          all.length === 0 ? 'precondition_failed' : 'invalid_argument',
          all.length === 0
            ? 'This tenant has no delivery target yet.'
            : `targetId is required: this tenant has ${all.length} delivery targets; see list_delivery_targets.`,
        );
      }
      return (all[0] as TargetRecord).id;
    }
  };
}

/**
 * Workers alive, the shared queue's depth and lag, this tenant's outcome counts, and the recent
 * failures of `keyId`'s own schedules (another key's schedule ids and errors are not its to see).
 */
export async function schedulerStatus(
  deps: Pick<SchedulerDeps, 'db' | 'boss'>,
  tenantId: string,
  keyId: string,
): Promise<SchedulerStatusInfo> {
  const instances = await deps.boss.getInstances();
  const workers = instances
    .filter((instance) => instance.name === 'calgate-worker' && instance.live)
    .map((instance) => ({
      name: `${instance.host}:${instance.pid}`,
      host: instance.host,
      lastSeen: instance.heartbeatOn,
    }));
  const queue = await deps.db.pool.query<{ depth: number; lag: number | null }>(
    `SELECT count(*)::int AS depth, extract(epoch FROM now() - min(start_after))::float8 AS lag
       FROM pgboss.job WHERE name = 'calgate-prompt-due' AND state IN ('created', 'retry') AND start_after <= now()`,
  );
  const counts = await deps.db.pool.query<{ status: string; n: number }>(
    `SELECT status, count(*)::int AS n FROM deliveries
      WHERE tenant_id = $1 AND created_at > now() - interval '24 hours' GROUP BY status`,
    [tenantId],
  );
  const failures = await deps.db.pool.query<{
    schedule_id: string;
    occurrence_at: Date;
    error: string | null;
  }>(
    `SELECT d.schedule_id, d.occurrence_at, d.error FROM deliveries d
       JOIN schedules s ON s.id = d.schedule_id AND s.tenant_id = d.tenant_id
      WHERE d.tenant_id = $1 AND s.key_id = $2 AND d.status = 'failed'
      ORDER BY d.created_at DESC, d.id DESC LIMIT 5`,
    [tenantId, keyId],
  );
  const by = new Map(counts.rows.map((row) => [row.status, row.n]));
  const row = queue.rows[0];
  return {
    workers,
    queueDepth: row?.depth ?? 0,
    lagSeconds: Math.max(0, Math.round((row?.lag ?? 0) * 10) / 10),
    last24h: {
      delivered: by.get('delivered') ?? 0,
      failed: by.get('failed') ?? 0,
      missed: by.get('missed') ?? 0,
      retrying: by.get('retrying') ?? 0,
      blocked: by.get('blocked') ?? 0,
    },
    recentFailures: failures.rows.map((failure) => ({
      scheduleId: failure.schedule_id,
      occurrence: failure.occurrence_at,
      error: failure.error,
    })),
  };
}
