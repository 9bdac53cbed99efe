/** Interval lengths: `30s`, `5m`, `1h`, `1h30m`, `2d`, or plain seconds (`45` or the number 45). */
import { CalgateError, err, ok, type Result } from '@calgate/core';

export const MIN_INTERVAL_MS = 1000;
/** Ten years: longer intervals are almost certainly mistakes, and this keeps arithmetic exact. */
export const MAX_INTERVAL_MS = 3650 * 86_400_000;

const UNIT_MS: Record<string, number> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 };
const TEXT = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;
const EXAMPLE = "e.g. '30s', '5m', '1h', '1h30m' or a number of seconds such as 45";

function invalid(value: unknown, problem: string): Result<never, CalgateError> {
  return err(
    new CalgateError('invalid_argument', `Invalid interval '${String(value)}': ${problem}`, {
      context: { every: value },
    }),
  );
}

/** The interval in milliseconds: at least 1 s, at most 3,650 days, whole seconds. */
export function parseInterval(every: string | number): Result<number, CalgateError> {
  let ms: number;
  if (typeof every === 'number') {
    if (!Number.isInteger(every)) {
      return invalid(every, `expected a whole number of seconds or a duration, ${EXAMPLE}.`);
    }
    ms = every * 1000;
  } else if (typeof every === 'string') {
    const text = every.replace(/\s+/g, '').toLowerCase();
    if (/^\d+$/.test(text)) {
      ms = Number(text) * 1000;
    } else {
      const match = text === '' ? null : TEXT.exec(text);
      if (match === null) {
        return invalid(every, `expected ${EXAMPLE}.`);
      }
      ms = 0;
      ['d', 'h', 'm', 's'].forEach((unit, i) => {
        ms += Number(match[i + 1] ?? 0) * (UNIT_MS[unit] as number);
      });
    }
  } else {
    return invalid(every, `expected ${EXAMPLE}.`);
  }
  if (ms < MIN_INTERVAL_MS) {
    return invalid(every, 'the interval must be at least 1 second.');
  }
  if (ms > MAX_INTERVAL_MS) {
    return invalid(every, 'the interval must be at most 3650 days.');
  }
  return ok(ms);
}

/** The shortest `1d2h3m4s` text for a whole-second interval. */
export function formatInterval(ms: number): string {
  let rest = Math.floor(ms / 1000);
  let out = '';
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
  ] as const) {
    if (rest >= size) {
      out += `${Math.floor(rest / size)}${unit}`;
      rest %= size;
    }
  }
  return rest > 0 || out === '' ? `${out}${rest}s` : out;
}
