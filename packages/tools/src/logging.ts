import type { UpstreamRetry } from '@calgate/providers';

/**
 * MCP logging: the levels a client may pick with `logging/setLevel` (RFC 5424, least severe
 * first), and the messages a tool call sends it as `notifications/message`.
 */
export const LOG_LEVELS = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
] as const;

export type LogLevel = (typeof LOG_LEVELS)[number];

/** Sends one message to the client when its level is at or above the one it asked for. */
export type ToolLog = (level: LogLevel, data: unknown) => void;

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && (LOG_LEVELS as readonly string[]).includes(value);
}

/** The logger name on every message Calgate sends. */
export const LOGGER = 'calgate';

/**
 * A ToolLog passing on messages at or above `min` to `send`; with no level set nothing is sent.
 * Sending never fails a call: a client that went away simply misses the message.
 */
export function logAtOrAbove(
  min: LogLevel | undefined,
  send: (params: { level: LogLevel; logger: string; data: unknown }) => Promise<void>,
): ToolLog {
  if (min === undefined) {
    return () => {};
  }
  const floor = LOG_LEVELS.indexOf(min);
  return (level, data) => {
    if (LOG_LEVELS.indexOf(level) >= floor) {
      send({ level, logger: LOGGER, data }).catch(() => {});
    }
  };
}

/** Result fields where tools list calendars they could not read ({calendarId, code, message}). */
const FAILURE_FIELDS = ['errors', 'unavailable', 'unavailableCalendars', 'unknownCalendars'] as const;

interface CalendarFailure {
  calendarId: string;
  code: string;
  message: string;
}

function isFailure(value: unknown): value is CalendarFailure {
  const { calendarId, code, message } = (value ?? {}) as Partial<Record<keyof CalendarFailure, unknown>>;
  return typeof calendarId === 'string' && typeof code === 'string' && typeof message === 'string';
}

/**
 * Tells the client about a result that leaves calendars out: a warning per calendar that could not
 * be read, then a notice that the answer is partial. Every multi-calendar tool reports such
 * calendars in one of FAILURE_FIELDS, so this one look at the result covers them all.
 */
export function logPartialResult(tool: string, result: unknown, log: ToolLog): void {
  if (typeof result !== 'object' || result === null) {
    return;
  }
  const failures: CalendarFailure[] = [];
  for (const field of FAILURE_FIELDS) {
    const entries = (result as Record<string, unknown>)[field];
    if (Array.isArray(entries)) {
      failures.push(...entries.filter(isFailure));
    }
  }
  for (const { calendarId, code, message } of failures) {
    log('warning', { tool, calendarId, code, message });
  }
  if (failures.length > 0) {
    const ids = [...new Set(failures.map((failure) => failure.calendarId))];
    log('notice', {
      tool,
      partial: true,
      calendarIds: ids,
      message: `${tool} answered without ${ids.length} calendar${ids.length === 1 ? '' : 's'} that could not be read.`,
    });
  }
}

/** A duration as a person reads it: "350 ms", "1.2 s", "8 s". */
function formatDuration(ms: number): string {
  if (ms < 1000) {
    return `${Math.round(ms)} ms`;
  }
  const seconds = ms / 1000;
  return Number.isInteger(seconds) || seconds >= 10 ? `${Math.round(seconds)} s` : `${seconds.toFixed(1)} s`;
}

const RATE_LIMIT_REASON = /ratelimitexceeded$/i;

/** What Google did with the operation, in words; statuses and codes only, never its texts. */
function describeUpstreamFailure(operation: string, failure: UpstreamRetry['failure']): string {
  switch (failure.kind) {
    case 'http': {
      const status = `HTTP ${failure.status}${failure.reason === undefined ? '' : ` ${failure.reason}`}`;
      return failure.status === 429 || RATE_LIMIT_REASON.test(failure.reason ?? '')
        ? `Google is rate-limiting ${operation} (${status})`
        : `Google answered ${operation} with ${status}`;
    }
    case 'network':
      return `Google could not be reached for ${operation} (${failure.code})`;
    case 'timeout':
      return `Google did not answer ${operation} within ${formatDuration(failure.afterMs)}`;
  }
}

/** A calendar as a retry message may name it: only one of the key's own. */
interface NamedCalendar {
  id: string;
  externalId: string;
  summary: string;
}

/**
 * Tells the client that a Google call of its tool call failed and is being tried again, so a slow
 * answer is explained while it is slow. The calendar is named only when it is one of the key's;
 * the data carries Calgate's id for it, never Google's.
 */
export function logUpstreamRetry(
  tool: string,
  retry: UpstreamRetry,
  calendars: readonly NamedCalendar[],
  log: ToolLog,
): void {
  const calendar =
    retry.calendarId === undefined
      ? undefined
      : calendars.find((candidate) => candidate.externalId === retry.calendarId);
  const about = calendar === undefined ? '' : ` for calendar '${calendar.summary}'`;
  const next = retry.attempt + 1;
  const { failure } = retry;
  log('warning', {
    tool,
    operation: retry.operation,
    ...(calendar === undefined ? {} : { calendarId: calendar.id }),
    ...(failure.kind === 'http'
      ? { status: failure.status, ...(failure.reason === undefined ? {} : { reason: failure.reason }) }
      : failure.kind === 'network'
        ? { code: failure.code }
        : { timeoutMs: failure.afterMs }),
    attempt: next,
    maxAttempts: retry.maxAttempts,
    retryInMs: Math.round(retry.delayMs),
    message: `${describeUpstreamFailure(retry.operation, failure)}${about}; retrying ${retry.delayMs > 0 ? `in ${formatDuration(retry.delayMs)}` : 'at once'} (attempt ${next} of ${retry.maxAttempts}).`,
  });
}
