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
