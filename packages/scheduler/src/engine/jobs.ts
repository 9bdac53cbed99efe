/** The jobs that carry due occurrences through pg-boss. */
import { createHash } from 'node:crypto';
import type { Db, PgBoss, SendOptions } from 'pg-boss';

/** The pg-boss queue of due occurrences. */
export const PROMPT_QUEUE = 'calgate-prompt-due';
/** The pg-boss queue of the periodic re-evaluation of schedules relative to calendar events. */
export const EVENTS_QUEUE = 'calgate-event-schedules';
/** pg-boss's schema, kept apart from Calgate's tables. */
export const BOSS_SCHEMA = 'pgboss';

/** A job's data: small, and enough to find everything else. */
export interface OccurrenceJob {
  tenantId: string;
  scheduleId: string;
  /** The scheduled instant, epoch milliseconds. */
  at: number;
  /** 1 for the first attempt; each retry is a new job with the next number. */
  attempt: number;
  /** For a schedule relative to calendar events: the event and its start when it was planned. */
  event?: { calendarId: string; eventId: string; start: number };
  /** A person asked to deliver this occurrence again (dashboard "replay"). */
  replay?: true;
}

/**
 * The job id of one attempt at one occurrence, a UUID derived from both: sending the same attempt
 * twice (a replay after a crash, two processes racing) inserts one job.
 */
export function jobIdFor(occurrenceId: string, attempt: number, replay = false): string {
  const hex = createHash('sha256')
    .update(`${occurrenceId}#${attempt}${replay ? '#replay' : ''}`)
    .digest('hex');
  // Version 8 (custom) and the RFC 9562 variant, so Postgres and every UUID parser accept it.
  const variant = ((Number.parseInt(hex[16] as string, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** pg-boss's view of a connection we already hold, so a job commits with our own statements. */
export function onClient(client: {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}): Db {
  return {
    executeSql: async (text, values) => {
      const result = await client.query(text, values);
      return { rows: result.rows as unknown[] as never[] };
    },
  };
}

/** Queues one attempt at one occurrence, due at `startAfter`. Idempotent per attempt. */
export async function sendOccurrence(
  boss: PgBoss,
  occurrenceId: string,
  job: OccurrenceJob,
  startAfter: Date,
  db?: Db,
): Promise<void> {
  const options: SendOptions = {
    id: jobIdFor(occurrenceId, job.attempt, job.replay === true),
    startAfter,
    ...(db === undefined ? {} : { db }),
  };
  await boss.send(PROMPT_QUEUE, job, options);
}
