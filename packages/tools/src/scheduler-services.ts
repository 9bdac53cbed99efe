/**
 * What the scheduler tools need from the gateway: scheduled prompts of the calling key and the
 * delivery targets of its tenant. The gateway binds one instance to each MCP request's key; a key
 * sees and cancels only its own schedules, and another tenant's target id is `not_found` exactly
 * like a missing one. Errors are CalgateErrors (`invalid_argument` with a precise message,
 * `not_found`, `precondition_failed`, `unavailable`).
 */

import type { TargetTestResult } from '@calgate/scheduler';

export type ScheduleStatus = 'active' | 'paused' | 'cancelled' | 'finished';
export type ScheduledKind = 'once' | 'cron' | 'interval' | 'rrule' | 'around_events';

/** What to schedule, as the caller wrote it (instants RFC 3339 with an offset). */
export type ScheduleInput =
  | { kind: 'once'; at: string }
  | { kind: 'cron'; cron: string; timeZone?: string | undefined }
  | { kind: 'interval'; every: string | number; startAt?: string | undefined }
  | { kind: 'rrule'; rrule: string; dtstart: string; timeZone?: string | undefined }
  | {
      kind: 'around_events';
      /** A rules query (the classification rules' language) events must match. */
      query: string;
      /** Negative: before each event's start; positive: after it. */
      offsetMinutes: number;
      /** Default: every calendar the key can read. */
      calendarIds?: string[] | undefined;
    };

export interface NewScheduledPrompt {
  prompt: string;
  schedule: ScheduleInput;
  /** May be omitted when the tenant has exactly one target. */
  targetId?: string | undefined;
  /** Explicit agent id; else the MCP request's `_meta`, the key's default agent, the target's default. */
  agentId?: string | undefined;
  /** The request's `_meta`, searched for an agent id when `agentId` is absent. */
  meta?: Record<string, unknown> | undefined;
  maxRepetitions?: number | undefined;
  /** RFC 3339; no run after it. */
  endAt?: string | undefined;
}

export interface LastDelivery {
  occurrence: Date;
  /** `blocked`: a worker's URL policy refused the target; it waits for a worker that accepts it. */
  status: 'pending' | 'delivered' | 'failed' | 'missed' | 'retrying' | 'blocked';
  attempt: number;
  statusCode: number | null;
  error: string | null;
}

export interface ScheduledPrompt {
  scheduleId: string;
  kind: ScheduledKind;
  /** In words, e.g. "cron 0 9 * * MON-FRI in Europe/Berlin". */
  description: string;
  prompt: string;
  status: ScheduleStatus;
  /** Null when paused, cancelled or finished, or when no event matches in the window planned. */
  nextRun: Date | null;
  /** Why `nextRun` is null ("paused", "no event matching … in the next 48 h; …"); null when it is not. */
  nextRunReason: string | null;
  /** The zone the schedule's wall-clock times are read in (cron, rrule); null for the others. */
  timeZone: string | null;
  targetId: string | null;
  agentId: string | null;
  repetitionsDone: number;
  maxRepetitions: number | null;
  endAt: Date | null;
  createdAt: Date;
  lastDelivery: LastDelivery | null;
}

export interface CreatedScheduledPrompt extends ScheduledPrompt {
  /** The first few runs (up to 5), for the agent to check it scheduled what it meant. */
  upcoming: Date[];
}

export interface DeliveryTargetInfo {
  targetId: string;
  kind: 'webhook' | 'letta';
  name: string;
  /** Scheme, host and port only (no path or query, which may hold tokens). */
  origin: string;
  defaultAgentId: string | null;
  disabled: boolean;
  disabledReason: string | null;
}

export interface LettaAgentInfo {
  id: string;
  name: string;
}

/** What testing a target found (shared with `calgate target test` and the dashboard). */
export type { TargetTestResult };

export interface SchedulerStatusInfo {
  /** Workers seen in the last minute, with their last heartbeat. */
  workers: { name: string; host: string; lastSeen: Date }[];
  /** Occurrences due now or earlier and not yet taken by a worker (all tenants' load, no details). */
  queueDepth: number;
  /** How late the oldest waiting occurrence is, in seconds (0 when none waits). */
  lagSeconds: number;
  /** This tenant's deliveries in the last 24 h by outcome. */
  last24h: { delivered: number; failed: number; missed: number; retrying: number; blocked: number };
  /** The most recent failures (up to 5) of the calling key's own schedules. */
  recentFailures: { scheduleId: string; occurrence: Date; error: string | null }[];
}

export interface SchedulerServices {
  schedule(input: NewScheduledPrompt): Promise<CreatedScheduledPrompt>;
  list(options: {
    agentId?: string | undefined;
    includeCancelled?: boolean | undefined;
  }): Promise<ScheduledPrompt[]>;
  /** A second cancel changes nothing and says so with `alreadyCancelled`. */
  cancel(scheduleId: string): Promise<{ schedule: ScheduledPrompt; alreadyCancelled: boolean }>;
  targets(): Promise<DeliveryTargetInfo[]>;
  /** The agents a Letta target's API key can see. */
  lettaAgents(targetId: string): Promise<LettaAgentInfo[]>;
  /** Sends a signed `target.test` event (webhook) or lists agents (Letta); records nothing. */
  testTarget(targetId?: string | undefined): Promise<TargetTestResult>;
  status(): Promise<SchedulerStatusInfo>;
}
