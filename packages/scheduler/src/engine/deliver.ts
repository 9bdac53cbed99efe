/** One job, start to end: claim the occurrence, send it, record what happened, queue a retry. */
import { CalgateError } from '@calgate/core';
import {
  type Claim,
  type ClaimPlan,
  type OccurrenceRef,
  occurrenceId,
  type ScheduleRecord,
  type SchedulerRepository,
} from '@calgate/store';
import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import { sendLettaMessage } from '../delivery/letta.ts';
import { promptDuePayload } from '../delivery/payload.ts';
import { sendWebhook, type WebhookOutcome } from '../delivery/webhook.ts';
import { type OccurrenceJob, onClient, sendOccurrence } from './jobs.ts';
import { planOccurrence } from './plan.ts';

/** After this long past its due time an occurrence is no longer retried; it fails for good. */
export const DEFAULT_RETRY_WINDOW_MS = 24 * 60 * 60_000;

/** Whether an event-relative occurrence still stands: the event exists, matches and starts as planned. */
export type EventCheck = (
  schedule: ScheduleRecord,
  event: NonNullable<OccurrenceJob['event']>,
) => Promise<boolean>;

export interface DeliveryDeps {
  boss: PgBoss;
  repository: SchedulerRepository;
  log: Logger;
  /** `OUTBOUND_ALLOW_PRIVATE` (alias `TARGETS_ALLOW_PRIVATE`). */
  allowPrivate: boolean;
  /** `SCHEDULER_MISFIRE_GRACE` in milliseconds. */
  graceMs: number;
  retryWindowMs?: number;
  /** Per attempt; 15 s by default. */
  timeoutMs?: number;
  now?: () => number;
  /** Checks event-relative occurrences before their first attempt; without it they are delivered as planned. */
  eventCheck?: EventCheck | undefined;
  /** Opened targets reused for a moment (a burst of occurrences to one target opens it once). */
  targets?: TargetCache | undefined;
}

type OpenedTarget = Awaited<ReturnType<SchedulerRepository['targets']['openSecret']>>;

/**
 * Targets opened in the last `ttlMs` (default 1 s), so a burst of occurrences for one target reads
 * and unseals it once. A target disabled, changed or deleted meanwhile is seen at most `ttlMs` late.
 */
export class TargetCache {
  readonly #repository: SchedulerRepository;
  readonly #ttlMs: number;
  readonly #entries = new Map<string, { at: number; opened: Promise<OpenedTarget> }>();

  constructor(repository: SchedulerRepository, ttlMs = 1_000) {
    this.#repository = repository;
    this.#ttlMs = ttlMs;
  }

  open(tenantId: string, targetId: string): Promise<OpenedTarget> {
    const key = `${tenantId}\u0000${targetId}`;
    const now = Date.now();
    const cached = this.#entries.get(key);
    if (cached !== undefined && now - cached.at < this.#ttlMs) {
      return cached.opened;
    }
    if (this.#entries.size > 1_000) {
      this.#entries.clear();
    }
    const opened = this.#repository.targets.openSecret(tenantId, targetId);
    this.#entries.set(key, { at: now, opened });
    opened.catch(() => this.#entries.delete(key));
    return opened;
  }
}

export type JobOutcome = 'delivered' | 'failed' | 'retrying' | 'missed' | 'skipped' | 'blocked';

/** Handles one occurrence job. Throws only when the database fails; pg-boss then retries the job. */
export async function handleOccurrence(
  deps: DeliveryDeps,
  job: OccurrenceJob,
  signal?: AbortSignal,
): Promise<JobOutcome> {
  const [outcome] = await handleOccurrences(deps, [{ data: job, signal }]);
  if (outcome instanceof Error) {
    throw outcome;
  }
  return outcome as JobOutcome;
}

function refOf(job: OccurrenceJob): OccurrenceRef {
  return {
    tenantId: job.tenantId,
    scheduleId: job.scheduleId,
    occurrenceAt: new Date(job.at),
    attempt: job.attempt,
    event: job.event,
    replay: job.replay === true,
  };
}

/**
 * Handles a batch of occurrence jobs: checks event-relative ones against their events, claims the
 * rest in one transaction, then sends them side by side. One outcome (or the error that stopped
 * it) per job, in order. Throws when the claim itself fails: pg-boss then retries the whole batch,
 * and each job resumes where it stood.
 */
export async function handleOccurrences(
  deps: DeliveryDeps,
  jobs: readonly { data: OccurrenceJob; signal?: AbortSignal | undefined }[],
): Promise<(JobOutcome | Error)[]> {
  const now = deps.now ?? Date.now;
  const outcomes: (JobOutcome | Error | undefined)[] = jobs.map(() => undefined);
  const claimable: number[] = [];
  for (const [index, { data: job }] of jobs.entries()) {
    if (
      job.event !== undefined &&
      job.attempt === 1 &&
      job.replay !== true &&
      deps.eventCheck !== undefined
    ) {
      const schedule = await deps.repository.schedules.get(job.tenantId, job.scheduleId);
      if (
        schedule === null ||
        schedule.status !== 'active' ||
        !(await deps.eventCheck(schedule, job.event))
      ) {
        outcomes[index] = 'skipped';
        continue;
      }
    }
    claimable.push(index);
  }
  const byRef = new Map<OccurrenceRef, OccurrenceJob>();
  const refs = claimable.map((index) => {
    const job = (jobs[index] as { data: OccurrenceJob }).data;
    const ref = refOf(job);
    byRef.set(ref, job);
    return ref;
  });
  const claims = await deps.repository.runs.claimMany(
    refs,
    (schedule, ref): ClaimPlan =>
      ref.event === undefined
        ? planOccurrence(schedule, ref.occurrenceAt.getTime(), now(), deps.graceMs)
        : {
            action: now() - ref.occurrenceAt.getTime() > deps.graceMs ? 'missed' : 'deliver',
            nextRunAt: null,
            missed: [],
          },
    async (client, decided, schedule) => {
      if (decided.nextRunAt !== null) {
        const next = decided.nextRunAt;
        await sendOccurrence(
          deps.boss,
          occurrenceId(schedule.id, next),
          { tenantId: schedule.tenantId, scheduleId: schedule.id, at: next.getTime(), attempt: 1 },
          next,
          onClient(client),
        );
      }
    },
  );
  await Promise.all(
    claims.map(async (claim, position) => {
      const index = claimable[position] as number;
      const { data: job, signal } = jobs[index] as { data: OccurrenceJob; signal?: AbortSignal };
      const ref = refs[position] as OccurrenceRef;
      if (claim.kind === 'done') {
        if (claim.reason === 'missed') {
          deps.log.warn({ scheduleId: job.scheduleId, occurrence: ref.occurrenceAt }, 'occurrence missed');
        }
        outcomes[index] = claim.reason === 'missed' ? 'missed' : 'skipped';
        return;
      }
      try {
        const outcome = await send(deps, claim, job, signal);
        outcomes[index] = await settle(deps, ref, job, claim, outcome, now());
      } catch (error) {
        outcomes[index] = error instanceof Error ? error : new Error(String(error));
      }
    }),
  );
  return outcomes.map((outcome) => outcome ?? new Error('occurrence left unhandled'));
}

/**
 * Queues again every occurrence a worker's URL policy blocked, for this worker (or any other) to
 * try with its own policy; those blocked for longer than the retry window fail. A worker calls it
 * when it starts: the policy is configuration, so it can only change with a (re)start.
 */
export async function requeueBlocked(deps: DeliveryDeps): Promise<{ queued: number; failed: number }> {
  const now = (deps.now ?? Date.now)();
  const since = new Date(now - (deps.retryWindowMs ?? DEFAULT_RETRY_WINDOW_MS));
  return deps.repository.runs.requeueBlocked(since, async (client, blocked) => {
    for (const occurrence of blocked) {
      const job: OccurrenceJob = {
        tenantId: occurrence.tenantId,
        scheduleId: occurrence.scheduleId,
        at: occurrence.occurrenceAt.getTime(),
        attempt: occurrence.attempt,
        ...(occurrence.event === null ? {} : { event: occurrence.event }),
      };
      await sendOccurrence(deps.boss, occurrence.occurrenceId, job, new Date(now), onClient(client));
    }
  });
}

async function send(
  deps: DeliveryDeps,
  claim: Extract<Claim, { kind: 'deliver' }>,
  job: OccurrenceJob,
  signal: AbortSignal | undefined,
): Promise<WebhookOutcome> {
  const { schedule } = claim;
  const failed = (message: string): WebhookOutcome => ({
    kind: 'failed',
    status: null,
    error: new CalgateError('precondition_failed', message),
    durationMs: 0,
  });
  if (schedule.targetId === null) {
    return failed(`Scheduled prompt ${schedule.id} has no delivery target (it was deleted).`);
  }
  let opened: OpenedTarget;
  try {
    opened = await (deps.targets?.open(schedule.tenantId, schedule.targetId) ??
      deps.repository.targets.openSecret(schedule.tenantId, schedule.targetId));
  } catch (error) {
    if (error instanceof CalgateError && error.code === 'not_found') {
      return failed(`Delivery target ${schedule.targetId} no longer exists.`);
    }
    throw error;
  }
  const { target, secret } = opened;
  if (target.disabledAt !== null) {
    return failed(`Delivery target ${target.id} is disabled: ${target.disabledReason ?? 'by a person'}.`);
  }
  const options = {
    allowPrivate: deps.allowPrivate,
    ...(deps.timeoutMs === undefined ? {} : { timeoutMs: deps.timeoutMs }),
    ...(signal === undefined ? {} : { signal }),
  };
  if (target.kind === 'letta') {
    const agentId = schedule.agentId ?? target.defaultAgentId;
    if (agentId === null) {
      return failed(
        `Scheduled prompt ${schedule.id} names no Letta agent and target ${target.id} has no default agent.`,
      );
    }
    return sendLettaMessage(
      {
        targetId: target.id,
        baseUrl: target.url,
        apiKey: secret.reveal(),
        agentId,
        prompt: schedule.prompt,
        messageId: claim.occurrenceId,
      },
      { ...options, attempt: job.attempt },
    );
  }
  const payload = {
    ...promptDuePayload({
      scheduleId: schedule.id,
      occurrence: new Date(job.at),
      prompt: schedule.prompt,
      agentId: schedule.agentId,
      repetition: claim.repetition,
    }),
    ...(job.event === undefined
      ? {}
      : {
          event: {
            calendarId: job.event.calendarId,
            eventId: job.event.eventId,
            start: new Date(job.event.start).toISOString(),
          },
        }),
  };
  return sendWebhook(
    {
      targetId: target.id,
      url: target.url,
      secret: secret.reveal(),
      messageId: claim.occurrenceId,
      payload,
      attempt: job.attempt,
    },
    options,
  );
}

async function settle(
  deps: DeliveryDeps,
  ref: OccurrenceRef,
  job: OccurrenceJob,
  claim: Extract<Claim, { kind: 'deliver' }>,
  outcome: WebhookOutcome,
  now: number,
): Promise<JobOutcome> {
  const { schedule } = claim;
  const context = { scheduleId: schedule.id, occurrenceId: claim.occurrenceId, attempt: ref.attempt };
  switch (outcome.kind) {
    case 'delivered':
      await deps.repository.runs.settle(ref, { status: 'delivered', statusCode: outcome.status });
      deps.log.info({ ...context, status: outcome.status, ms: outcome.durationMs }, 'prompt delivered');
      return 'delivered';
    case 'disable':
      if (schedule.targetId !== null) {
        await deps.repository.targets.disable(
          schedule.tenantId,
          schedule.targetId,
          'The receiver answered 410 Gone; it asked for no more deliveries.',
        );
      }
      await deps.repository.runs.settle(ref, {
        status: 'failed',
        statusCode: 410,
        error: outcome.error.message,
      });
      deps.log.warn({ ...context, targetId: schedule.targetId }, 'target disabled after 410 Gone');
      return 'failed';
    case 'blocked':
      // Not retried against the same policy: a worker that starts (perhaps with the setting on) queues it again.
      await deps.repository.runs.settle(ref, { status: 'blocked', error: outcome.error.message });
      deps.log.warn(
        { ...context, targetId: schedule.targetId, error: outcome.error.message },
        "delivery blocked by this worker's URL policy; it is queued again when a worker starts",
      );
      return 'blocked';
    case 'failed':
      await deps.repository.runs.settle(ref, {
        status: 'failed',
        statusCode: outcome.status,
        error: outcome.error.message,
      });
      deps.log.warn({ ...context, status: outcome.status, error: outcome.error.message }, 'delivery failed');
      return 'failed';
    case 'retry': {
      const retryAt = now + outcome.retryInMs;
      if (retryAt - ref.occurrenceAt.getTime() > (deps.retryWindowMs ?? DEFAULT_RETRY_WINDOW_MS)) {
        await deps.repository.runs.settle(ref, {
          status: 'failed',
          statusCode: outcome.status,
          error: `Gave up after ${ref.attempt} attempts: ${outcome.error.message}`,
        });
        deps.log.warn({ ...context, error: outcome.error.message }, 'delivery given up');
        return 'failed';
      }
      await deps.repository.runs.transaction(async (client) => {
        const next: OccurrenceJob = {
          tenantId: ref.tenantId,
          scheduleId: ref.scheduleId,
          at: ref.occurrenceAt.getTime(),
          attempt: ref.attempt + 1,
          ...(job.event === undefined ? {} : { event: job.event }),
        };
        await sendOccurrence(deps.boss, claim.occurrenceId, next, new Date(retryAt), onClient(client));
        await deps.repository.runs.settle(
          ref,
          { status: 'retrying', statusCode: outcome.status, error: outcome.error.message },
          client,
        );
      });
      deps.log.info(
        { ...context, status: outcome.status, retryInMs: outcome.retryInMs, error: outcome.error.message },
        'delivery will be retried',
      );
      return 'retrying';
    }
  }
}
