/**
 * The work of expand_rrule, pure and self-contained so a worker thread can run it: arguments are
 * plain data (the zone already checked), the answer is plain data, failures are CalgateErrors.
 */
import {
  CalgateError,
  expandRule,
  fromLocal,
  type LocalDateTime,
  naiveMs,
  parseDateTimeFields,
  parseRRule,
  type RRule,
  weekdayOf,
} from '@calgate/core';
import { encode } from '@toon-format/toon';
import { type Format, formatText, jsonOf } from '../../format.ts';
import { rangeOut } from '../../range.ts';
import { pageToken } from './page-token.ts';

/** The most instances one call returns. */
export const MAX_EXPANDED = 10_000;
const MINUTE = 60_000;
const SKIP_SLACK = 16 * 3_600;
const LOCAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;

/**
 * The bytes a page may have, as JSON and as text: o200k never makes more tokens than a text has
 * UTF-8 bytes, so a page within 25,000 bytes is within 25,000 tokens, whatever the zone, and the
 * gateway's answer limit passes it on its length, without counting its tokens.
 */
const PAGE_BYTES = 25_000;
/** The longest an instance is written: `{"start":"2026-01-05T09:30:00-05:00","end":"…"},`. */
const INSTANCE_BYTES = 72;
/** The rest of a page: timeZone (at most 64 characters), truncated, nextPageToken, the keys. */
const FRAME_BYTES = 200;
/** The most instances one page holds (the first page of a rule dtstart is off holds fewer). */
export const PAGE_SIZE = Math.floor((PAGE_BYTES - FRAME_BYTES) / INSTANCE_BYTES);

/** Where a page starts: after `delivered` instances, the last of them at `after` (epoch ms). */
export interface PagePosition {
  delivered: number;
  after: number;
}

export interface ExpansionRequest {
  rrule: string;
  dtstart: string;
  /** A valid IANA zone. */
  timeZone: string;
  durationMinutes: number;
  /** Instances wanted in all, across pages. */
  count: number;
  exdates: readonly string[];
  /** The page to make: the first when absent. */
  page?: PagePosition | undefined;
  /** Instances per page; as many as fit in PAGE_BYTES when absent. */
  pageSize?: number | undefined;
}

export interface Expansion {
  instances: { start: string; end: string }[];
  truncated: boolean;
  warnings?: string[];
  /** Where the next page starts, when more of the `count` instances follow. */
  next?: PagePosition;
}

const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];

/** `YYYY-MM-DDTHH:MM:SS` of a wall-clock reading in naive ms. */
function localText(naive: number): string {
  return new Date(naive).toISOString().slice(0, 19);
}

/**
 * Why dtstart is an instance the rule itself would not make, when it is: RFC 5545 counts DTSTART
 * as the first instance anyway, which surprises whoever meant "Mondays from this date".
 */
function offRuleWarning(
  request: ExpansionRequest,
  rule: RRule,
  start: LocalDateTime,
  excluded: boolean,
): string | undefined {
  const bare = expandRule(rule, start, request.timeZone, { includeStart: false, limit: 1, maxInstances: 1 });
  const first = bare.ok ? bare.value[0]?.local : undefined;
  if (first === naiveMs(start)) {
    return undefined;
  }
  const day = WEEKDAYS[weekdayOf(start)] ?? '';
  const head = `dtstart ${request.dtstart} (a ${day}) does not match the rule ${request.rrule}. RFC 5545 counts dtstart as the first instance all the same`;
  if (excluded) {
    return `${head}, but exdates leave it out, so it is not included.`;
  }
  const from =
    first === undefined ? '' : `; to leave it out, start from the rule's first date, ${localText(first)}`;
  return `${head}, so it is included as the first instance (and counts towards COUNT)${from}.`;
}

/** A local date-time `YYYY-MM-DDTHH:MM:SS`, checked (a real date, no offset). */
function localOf(text: string, field: string): LocalDateTime {
  if (!LOCAL.test(text)) {
    throw new CalgateError(
      'invalid_argument',
      `${field} '${text}' must be a local date-time YYYY-MM-DDTHH:MM:SS without offset; the zone goes in timeZone.`,
    );
  }
  const parsed = parseDateTimeFields(text, true);
  if (!parsed.ok) {
    throw new CalgateError('invalid_argument', `${field}: ${parsed.error.message}`);
  }
  return parsed.value.local;
}

/**
 * One page of the instances: up to `pageSize` of the `count` wanted, from `page` on. A later page
 * starts from the instance after the last one sent; for a rule without COUNT the engine skips
 * straight there, so a late page costs what the first does. COUNT needs the instances before it counted,
 * so such rules are expanded from dtstart again (a COUNT rule has at most 10,000 instances to
 * make here).
 */
export function expandInstances(request: ExpansionRequest): Expansion {
  const zone = request.timeZone;
  const rule = parseRRule(request.rrule);
  if (!rule.ok) {
    throw rule.error;
  }
  const start = localOf(request.dtstart, 'dtstart');
  // Read with RFC 5545's rules, like the instances: so an EXDATE in a gap still matches.
  const excluded = new Set(request.exdates.map((text) => fromLocal(localOf(text, 'exdates'), zone)));
  const page = request.page;
  const delivered = page?.delivered ?? 0;
  const warning =
    page === undefined
      ? offRuleWarning(request, rule.value, start, excluded.has(fromLocal(start, zone)))
      : undefined;
  // The warning (with the rule in it) takes room on the first page.
  const fits =
    warning === undefined
      ? PAGE_SIZE
      : Math.floor((PAGE_BYTES - FRAME_BYTES - 2 * Buffer.byteLength(warning)) / INSTANCE_BYTES);
  const want = Math.min(request.pageSize ?? fits, request.count - delivered);
  // Only instances after the last one sent (instants never go back: an ambiguous time is its
  // first reading, one in a gap moves forward).
  const from = page === undefined ? undefined : page.after + 1;
  // Instances made before `from`: every earlier one for a COUNT rule; else those of the 16 hours
  // the engine starts early by (wall-clock times run ahead of UTC), at most one a second.
  const before =
    page === undefined ? 0 : rule.value.count === undefined ? SKIP_SLACK : 2 * (delivered + excluded.size);
  // Asking for one more than wanted tells whether more follow; exdates and wall-clock times that
  // name the same instant (a skipped day, e.g. Apia on 2011-12-30) need more.
  let limit = want + 1 + excluded.size;
  for (;;) {
    const expanded = expandRule(rule.value, start, zone, {
      limit,
      maxInstances: limit + before,
      ...(from === undefined ? {} : { from }),
    });
    if (!expanded.ok) {
      throw expanded.error;
    }
    // Instants never go back, so wall-clock times naming the same one are neighbours.
    const starts: number[] = [];
    let previous = Number.NaN;
    for (const { instant } of expanded.value) {
      if (instant !== previous && !excluded.has(instant)) {
        starts.push(instant);
      }
      previous = instant;
    }
    if (starts.length > want || expanded.value.length < limit || limit >= 4 * MAX_EXPANDED) {
      const duration = request.durationMinutes * MINUTE;
      const taken = starts.slice(0, want);
      const more = starts.length > want;
      const last = taken[taken.length - 1];
      const finished = delivered + taken.length >= request.count;
      return {
        instances: taken.map((instant) => rangeOut({ start: instant, end: instant + duration }, zone)),
        truncated: more && finished,
        ...(warning === undefined ? {} : { warnings: [warning] }),
        ...(more && !finished && last !== undefined
          ? { next: { delivered: delivered + taken.length, after: last } }
          : {}),
      };
    }
    limit *= 2;
  }
}

/** expand_rrule's answer: one page of instances, and the token of the next when more follow. */
export interface ExpansionResult {
  timeZone: string;
  instances: { start: string; end: string }[];
  truncated: boolean;
  nextPageToken?: string;
  warnings?: string[];
}

/** The answer of one page (see expandInstances), its position turned into a page token. */
export function expansionResult(request: ExpansionRequest): ExpansionResult {
  const { instances, truncated, warnings, next } = expandInstances(request);
  return {
    timeZone: request.timeZone,
    instances,
    truncated,
    ...(next === undefined ? {} : { nextPageToken: pageToken(request, next) }),
    ...(warnings === undefined ? {} : { warnings }),
  };
}

/**
 * expand_rrule's whole answer, made where the expansion runs (a worker thread for costly pages):
 * the result, its JSON and its text in the format asked for, each made once.
 */
export function expansionAnswer(input: { request: ExpansionRequest; format: Format }): {
  result: ExpansionResult;
  json: string;
  text: string;
} {
  const result = expansionResult(input.request);
  const json = jsonOf(result);
  const text = input.format === 'toon' ? expansionToon(result) : json;
  return { result, json, text };
}

/** An instant as written in answers: TOON quotes it (it holds ':') and needs no escapes. */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:Z|[+-]\d{2}:\d{2})$/;

/**
 * The TOON text of an expansion, exactly as formatText writes it, with the instances' table
 * written directly: the general encoder spends ~5 µs a row deciding how to quote each instant.
 */
export function expansionToon(result: ExpansionResult): string {
  const { timeZone, instances, ...rest } = result;
  if (instances.length === 0 || !instances.every((i) => INSTANT.test(i.start) && INSTANT.test(i.end))) {
    return formatText(result, 'toon');
  }
  const lines = [encode({ timeZone }), `instances[${instances.length}]{start,end}:`];
  for (const instance of instances) {
    lines.push(`  "${instance.start}","${instance.end}"`);
  }
  lines.push(encode(rest));
  return lines.join('\n');
}
