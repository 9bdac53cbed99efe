/**
 * Five-field cron expressions as Vixie cron and cronie read them: `minute hour day-of-month month
 * day-of-week`, each a comma list of `*`, `N`, `A-B`, with an optional `/STEP`; month and weekday
 * names (`JAN`–`DEC`, `SUN`–`SAT`); 0 and 7 both mean Sunday; the `@hourly` … `@yearly` macros.
 */
import { CalgateError, err, ok, type Result } from '@calgate/core';

export interface CronExpression {
  /** The expression as given, trimmed. */
  source: string;
  /** Allowed values of each field, ascending. Weekdays are 0 = Sunday … 6 = Saturday. */
  minutes: number[];
  hours: number[];
  daysOfMonth: number[];
  months: number[];
  daysOfWeek: number[];
  /**
   * Vixie cron's flags: a field whose text starts with `*` (including `*\/15`). A day-of-month or
   * day-of-week flag makes the two day fields combine with AND; without either, a day matches
   * when either field matches (OR). Minute or hour flags make the job a "wildcard" job, which
   * changes how it behaves across DST changes (see `cron-next.ts`).
   */
  minuteStar: boolean;
  hourStar: boolean;
  domStar: boolean;
  dowStar: boolean;
}

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
  /** The lowest value a name maps to (1 for months, 0 for weekdays). */
  nameBase?: number;
}

const MONTH_NAMES = [
  'JAN',
  'FEB',
  'MAR',
  'APR',
  'MAY',
  'JUN',
  'JUL',
  'AUG',
  'SEP',
  'OCT',
  'NOV',
  'DEC',
] as const;
const DAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] as const;

const FIELDS: readonly FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTH_NAMES, nameBase: 1 },
  { name: 'day-of-week', min: 0, max: 7, names: DAY_NAMES, nameBase: 0 },
];

const MACROS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

const EXAMPLE = "e.g. '0 9 * * MON-FRI' (minute hour day-of-month month day-of-week)";

function failure(source: string, problem: string): Result<never, CalgateError> {
  return err(
    new CalgateError('invalid_argument', `Invalid cron expression '${source}': ${problem}`, {
      context: { cron: source },
    }),
  );
}

/** A number or a name, or a message saying what is wrong with it. */
function parseValue(text: string, field: FieldSpec): number | string {
  if (/^\d+$/.test(text)) {
    const value = Number(text);
    if (value < field.min || value > field.max) {
      return `${field.name} field: ${text} is out of range ${field.min}–${field.max}.`;
    }
    return value;
  }
  if (field.names !== undefined && /^[A-Za-z]+$/.test(text)) {
    const index = field.names.indexOf(text.toUpperCase());
    if (index >= 0) {
      return index + (field.nameBase ?? 0);
    }
    return `${field.name} field: unknown name '${text}' (expected ${field.names[0]}–${field.names[field.names.length - 1]}).`;
  }
  const hint = field.names ? ` or a name such as ${field.names[1]}` : '';
  return `${field.name} field: '${text}' is not a number ${field.min}–${field.max}${hint}.`;
}

/** The values of one field, or a message naming the field and the fault. */
function parseField(text: string, field: FieldSpec): Set<number> | string {
  const values = new Set<number>();
  for (const item of text.split(',')) {
    if (item === '') {
      return `${field.name} field: empty list item in '${text}'.`;
    }
    const slash = item.indexOf('/');
    const base = slash >= 0 ? item.slice(0, slash) : item;
    let step = 1;
    if (slash >= 0) {
      const stepText = item.slice(slash + 1);
      if (!/^\d+$/.test(stepText) || Number(stepText) < 1) {
        return `${field.name} field: step '${stepText}' in '${item}' must be a positive whole number.`;
      }
      step = Number(stepText);
    }
    let low: number;
    let high: number;
    if (base === '*') {
      low = field.min;
      high = field.max;
    } else {
      const dash = base.indexOf('-');
      const from = parseValue(dash >= 0 ? base.slice(0, dash) : base, field);
      if (typeof from === 'string') {
        return from;
      }
      low = from;
      if (dash >= 0) {
        const to = parseValue(base.slice(dash + 1), field);
        if (typeof to === 'string') {
          return to;
        }
        high = to;
        if (high < low) {
          return `${field.name} field: range '${base}' runs backwards (${low} > ${high}); write it in ascending order or as a list.`;
        }
      } else {
        // `N/STEP` means from N to the field's end, as most crons read it.
        high = slash >= 0 ? field.max : low;
      }
    }
    for (let v = low; v <= high; v += step) {
      values.add(v);
    }
  }
  return values;
}

const sorted = (values: Set<number>) => [...values].sort((a, b) => a - b);

/** Parses a five-field cron expression, or explains which field is wrong and why. */
export function parseCron(expression: string): Result<CronExpression, CalgateError> {
  const source = typeof expression === 'string' ? expression.trim() : '';
  if (source === '') {
    return failure(String(expression ?? ''), `it is empty; expected five fields, ${EXAMPLE}.`);
  }
  let text = source;
  if (source.startsWith('@')) {
    const expanded = MACROS[source.toLowerCase()];
    if (expanded === undefined) {
      return failure(source, `unknown macro '${source}' (known: ${Object.keys(MACROS).join(', ')}).`);
    }
    text = expanded;
  }
  const parts = text.split(/\s+/);
  if (parts.length !== 5) {
    return failure(source, `expected 5 fields, got ${parts.length}; ${EXAMPLE}.`);
  }
  const sets: Set<number>[] = [];
  for (let i = 0; i < 5; i++) {
    const parsed = parseField(parts[i] as string, FIELDS[i] as FieldSpec);
    if (typeof parsed === 'string') {
      return failure(source, parsed);
    }
    sets.push(parsed);
  }
  const [minutes, hours, doms, months, dows] = sets as [
    Set<number>,
    Set<number>,
    Set<number>,
    Set<number>,
    Set<number>,
  ];
  if (dows.has(7)) {
    dows.delete(7);
    dows.add(0);
  }
  const star = (i: number) => (parts[i] as string).startsWith('*');
  return ok({
    source,
    minutes: sorted(minutes),
    hours: sorted(hours),
    daysOfMonth: sorted(doms),
    months: sorted(months),
    daysOfWeek: sorted(dows),
    minuteStar: star(0),
    hourStar: star(1),
    domStar: star(2),
    dowStar: star(4),
  });
}
