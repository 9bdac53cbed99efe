/** Limits and the records of delivery targets, schedules and deliveries. */
import { createHash } from 'node:crypto';
import { inspect } from 'node:util';

export const TARGET_NAME_MAX = 100;
export const TARGET_URL_MAX = 2048;
export const AGENT_ID_MAX = 200;
export const SCHEDULE_PROMPT_MAX = 10_000;
export const DELIVERY_ERROR_MAX = 2000;

export type TargetKind = 'webhook' | 'letta';
export type ScheduleStatus = 'active' | 'paused' | 'cancelled' | 'finished';
/**
 * `blocked`: a worker's URL policy (OUTBOUND_ALLOW_PRIVATE) refused the target; the occurrence
 * waits, and is queued again when a worker starts (`ScheduleRuns.requeueBlocked`).
 */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'missed' | 'retrying' | 'blocked';

/** A target as callers see it: never its secret. */
export interface TargetRecord {
  id: string;
  tenantId: string;
  kind: TargetKind;
  name: string;
  url: string;
  defaultAgentId: string | null;
  disabledAt: Date | null;
  disabledReason: string | null;
  createdAt: Date;
}

/** A webhook gets a new `whsec_` secret; a Letta target keeps the API key it is given. */
export type NewTarget =
  | { kind: 'webhook'; name: string; url: string }
  | { kind: 'letta'; name: string; url: string; apiKey: string; defaultAgentId?: string | null };

export interface CreatedTarget {
  target: TargetRecord;
  /** A webhook's `whsec_` secret, shown this once; null for Letta (the caller gave the key). */
  secret: string | null;
}

/**
 * An opened secret that does not print itself: `String()`, JSON and `util.inspect` show
 * `[secret]`; `reveal()` is the one way to the text.
 */
export class TargetSecret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return '[secret]';
  }

  toJSON(): string {
    return '[secret]';
  }

  [inspect.custom](): string {
    return '[secret]';
  }
}

/** A stored ScheduleSpec: a JSON object with its `kind`; the scheduler package checks the rest. */
export type StoredSpec = { readonly kind: string } & Readonly<Record<string, unknown>>;

export interface ScheduleRecord {
  id: string;
  tenantId: string;
  /** The key that created the schedule and owns it. */
  keyId: string;
  targetId: string | null;
  agentId: string | null;
  prompt: string;
  spec: StoredSpec;
  nextRunAt: Date | null;
  repetitionsDone: number;
  status: ScheduleStatus;
  createdAt: Date;
  cancelledAt: Date | null;
}

export interface NewSchedule {
  keyId: string;
  targetId?: string | null;
  agentId?: string | null;
  prompt: string;
  spec: StoredSpec;
  /**
   * The first run, computed from the spec by the caller; null for a schedule relative to calendar
   * events while no matching event is planned (it stays active).
   */
  nextRunAt: Date | null;
}

/** With `keyId`, only that key's schedules exist for the call. */
export interface ScheduleScope {
  keyId?: string;
}

export interface CancelOutcome {
  schedule: ScheduleRecord;
  /** True when it had been cancelled before this call; nothing changed. */
  alreadyCancelled: boolean;
}

export interface DeliveryRecord {
  id: string;
  tenantId: string;
  scheduleId: string;
  occurrenceAt: Date;
  /** `<schedule id>:<instant>`, the `webhook-id` of every attempt. */
  occurrenceId: string;
  attempt: number;
  status: DeliveryStatus;
  statusCode: number | null;
  error: string | null;
  deliveredAt: Date | null;
  createdAt: Date;
  /** 1 for the schedule's first delivered occurrence; null when missed. */
  repetition: number | null;
  /** For a schedule relative to calendar events: the event this occurrence belongs to. */
  event: { calendarId: string; eventId: string; start: number } | null;
}

export interface DeliveryAttempt {
  scheduleId: string;
  occurrenceAt: Date;
  /** 1 for the first attempt. */
  attempt: number;
  status: DeliveryStatus;
  statusCode?: number | null;
  /** Shortened to DELIVERY_ERROR_MAX characters. */
  error?: string | null;
}

/**
 * The id of one occurrence: the schedule id and the instant, whole seconds without `.000`; for a
 * schedule relative to calendar events, also a short digest of the event id (two events may start
 * at the same instant).
 */
export function occurrenceId(scheduleId: string, occurrenceAt: Date, eventId?: string): string {
  const base = `${scheduleId}:${occurrenceAt.toISOString().replace('.000Z', 'Z')}`;
  if (eventId === undefined) {
    return base;
  }
  return `${base}:${createHash('sha256').update(eventId).digest('base64url').slice(0, 12)}`;
}
