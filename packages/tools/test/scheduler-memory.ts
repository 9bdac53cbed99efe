import { CalgateError } from '@calgate/core';
import { createSchedule, nextRuns } from '@calgate/scheduler';
import {
  type DeliveryTargetInfo,
  type NewScheduledPrompt,
  noPlannedEventReason,
  type ScheduledPrompt,
  type SchedulerServices,
} from '../src/index.ts';

/**
 * SchedulerServices in memory, below the seam the gateway's real service implements (that one is
 * tested end to end over HTTP). Schedules are computed by @calgate/scheduler's pure engine, so
 * next runs and its error messages are real; around-event schedules have no runs here. Every
 * call is recorded for the tests to inspect.
 */
export class MemoryScheduler implements SchedulerServices {
  readonly calls: { method: string; args: unknown[] }[] = [];
  readonly schedules = new Map<string, ScheduledPrompt>();
  readonly now: Date;
  readonly targetList: DeliveryTargetInfo[];
  /** The zone of cron and RRULE schedules given none (the real service uses the key's). */
  readonly defaultZone: string;
  #counter = 0;

  constructor(now: Date, targetList: DeliveryTargetInfo[] = [], defaultZone = 'UTC') {
    this.now = now;
    this.targetList = targetList;
    this.defaultZone = defaultZone;
  }

  async schedule(input: NewScheduledPrompt) {
    this.calls.push({ method: 'schedule', args: [input] });
    const targetId = input.targetId ?? this.onlyTarget();
    const { schedule } = input;
    const created = new Date(this.now);
    let runs: Date[] = [];
    let timeZone: string | null = null;
    let description = `around events matching ${schedule.kind === 'around_events' ? schedule.query : ''}`;
    if (schedule.kind !== 'around_events') {
      const request =
        schedule.kind === 'cron' || schedule.kind === 'rrule'
          ? { ...schedule, timeZone: schedule.timeZone ?? this.defaultZone }
          : schedule;
      const result = createSchedule(
        {
          ...(request as Parameters<typeof createSchedule>[0]),
          ...(input.maxRepetitions === undefined ? {} : { maxRepetitions: input.maxRepetitions }),
          ...(input.endAt === undefined ? {} : { endAt: input.endAt }),
        },
        this.now.getTime(),
      );
      if (!result.ok) {
        throw result.error;
      }
      runs = nextRuns(result.value.schedule, result.value.firstRun - 1, 5).map((ms) => new Date(ms));
      const spec = result.value.schedule.spec;
      timeZone = 'timeZone' in spec ? spec.timeZone : null;
      description = spec.kind === 'cron' ? `cron ${spec.cron} in ${spec.timeZone}` : spec.kind;
    }
    this.#counter += 1;
    const stored: ScheduledPrompt = {
      scheduleId: `sch_${String(this.#counter).padStart(26, '0')}`,
      kind: schedule.kind,
      description,
      prompt: input.prompt,
      status: 'active',
      nextRun: runs[0] ?? null,
      nextRunReason:
        runs[0] !== undefined
          ? null
          : schedule.kind === 'around_events'
            ? noPlannedEventReason(schedule.query)
            : 'no runs are left',
      timeZone,
      targetId,
      agentId: input.agentId ?? agentIn(input.meta),
      repetitionsDone: 0,
      maxRepetitions: input.maxRepetitions ?? null,
      endAt: input.endAt === undefined ? null : new Date(input.endAt),
      createdAt: created,
      lastDelivery: null,
    };
    this.schedules.set(stored.scheduleId, stored);
    return { ...stored, upcoming: runs };
  }

  async list(options: { agentId?: string | undefined; includeCancelled?: boolean | undefined }) {
    this.calls.push({ method: 'list', args: [options] });
    return [...this.schedules.values()].filter(
      (schedule) =>
        (options.includeCancelled === true || schedule.status !== 'cancelled') &&
        (options.agentId === undefined || schedule.agentId === options.agentId),
    );
  }

  async cancel(scheduleId: string) {
    this.calls.push({ method: 'cancel', args: [scheduleId] });
    const schedule = this.schedules.get(scheduleId);
    if (schedule === undefined) {
      throw new CalgateError('not_found', `Scheduled prompt '${scheduleId}' was not found.`);
    }
    const alreadyCancelled = schedule.status === 'cancelled';
    schedule.status = 'cancelled';
    schedule.nextRun = null;
    schedule.nextRunReason = 'cancelled';
    return { schedule: { ...schedule }, alreadyCancelled };
  }

  async targets() {
    this.calls.push({ method: 'targets', args: [] });
    return this.targetList;
  }

  async lettaAgents(targetId: string) {
    this.calls.push({ method: 'lettaAgents', args: [targetId] });
    const target = this.targetList.find((candidate) => candidate.targetId === targetId);
    if (target?.kind !== 'letta') {
      throw new CalgateError('not_found', `Letta target '${targetId}' was not found.`);
    }
    return [{ id: 'agent-6b3c1f2e-8d4a-4e7b-9c21-5f0a7d3e9b14', name: 'Assistant' }];
  }

  async testTarget(targetId?: string) {
    this.calls.push({ method: 'testTarget', args: [targetId] });
    return { targetId: targetId ?? this.onlyTarget(), ok: true, status: 200, durationMs: 42, error: null };
  }

  async status() {
    this.calls.push({ method: 'status', args: [] });
    return {
      workers: [{ name: 'worker-1', host: 'calgate-1', lastSeen: new Date('2026-11-23T11:59:30Z') }],
      queueDepth: 0,
      lagSeconds: 0,
      last24h: { delivered: 12, failed: 0, missed: 0, retrying: 0, blocked: 0 },
      recentFailures: [],
    };
  }

  onlyTarget(): string {
    const [only, ...rest] = this.targetList;
    if (only === undefined || rest.length > 0) {
      throw new CalgateError(
        'invalid_argument',
        `Give targetId: this tenant has ${this.targetList.length} delivery targets.`,
      );
    }
    return only.targetId;
  }
}

/** The agent id a Letta client puts in `_meta`. */
function agentIn(meta: Record<string, unknown> | undefined): string | null {
  const value = meta?.agentId;
  return typeof value === 'string' ? value : null;
}
