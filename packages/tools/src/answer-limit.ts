/**
 * No tool answer is longer than ANSWER_TOKEN_LIMIT o200k tokens: its text and its structured
 * content, each. An answer that would be longer is cut at the boundary every tool passes
 * (callTool), never silently:
 *
 * - a read tool's answer keeps the items of its top-level lists that fit, in order, and carries
 *   `nextPageToken`: the same call with `pageToken` set to it answers the items after them (the
 *   tool runs again and the answer continues after the last item given), so following the tokens
 *   yields every item exactly once;
 * - a write tool's answer (which must not run twice) keeps what fits and says in `truncated` how
 *   many items were left out (`cut`);
 * - a single item too long on its own has its longest texts cut, each with a marker saying so,
 *   and `cut` naming them.
 *
 * Counting is cheap where it can be: o200k never has more tokens than the text has UTF-8 bytes,
 * so an answer of at most ANSWER_TOKEN_LIMIT bytes passes on its byte length; only longer ones
 * are counted (tokens/o200k.ts: a compact table loaded the first time, and each event's or row's
 * segment of the text counted once and then looked up).
 */
import { createHash } from 'node:crypto';
import { CalgateError } from '@calgate/core';
import { jsonOf } from './format.ts';
import { o200kCount } from './tokens/o200k.ts';

export const ANSWER_TOKEN_LIMIT = 25_000;
/** What a cut answer aims at, leaving room for the note that says so and for rounding. */
const TARGET = Math.floor(ANSWER_TOKEN_LIMIT * 0.94);
/** Texts shorter than this are never cut: ids, times, names. */
const CUTTABLE = 400;
/** Fields that are never cut: cutting them would break what they are for. */
const UNCUT = new Set(['id', 'nextPageToken', 'calendarId', 'eventId', 'timeZone']);

/** The o200k tokens of `text`, exactly; once past `stopAbove`, a figure above it. */
export async function tokenCount(text: string, stopAbove = Number.POSITIVE_INFINITY): Promise<number> {
  return o200kCount(text, stopAbove);
}

/**
 * Tokens of `text` when they may exceed `limit`, else its byte length (an upper bound that
 * already shows it fits): tokens are counted only for texts longer than `limit` bytes.
 */
export async function tokenBound(text: string, limit = ANSWER_TOKEN_LIMIT): Promise<number> {
  const bytes = Buffer.byteLength(text);
  return bytes <= limit ? bytes : tokenCount(text);
}

// ---------------------------------------------------------------------------------------------
// Continuation tokens: `pg.` + base64url JSON + `.` + a check digest. They name the tool, a
// digest of its other arguments, how many items came before and a digest of the last of them.

export const PAGE_TOKEN_PREFIX = 'pg.';

export interface PageCursor {
  /** The tool the token continues. */
  t: string;
  /** Digest of the call's arguments besides pageToken and format. */
  h: string;
  /** Items given by the pages before. */
  o: number;
  /** Digest of the last item given. */
  l: string;
  /** The tool's own pageToken of the call that was cut, if it had one. */
  n?: string;
}

function digest(text: string, length = 16): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, length);
}

const checkOf = (payload: string) => digest(`calgate-page\u0000${payload}`, 12);

export function isPageToken(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(PAGE_TOKEN_PREFIX);
}

export function encodePageToken(cursor: PageCursor): string {
  const payload = Buffer.from(JSON.stringify(cursor)).toString('base64url');
  return `${PAGE_TOKEN_PREFIX}${payload}.${checkOf(payload)}`;
}

const NOT_OURS = (tool: string) =>
  `pageToken is not a nextPageToken ${tool} gave; pass one unchanged, or omit pageToken to start over.`;

/** The cursor in a token this tool gave, or a CalgateError saying what is wrong with it. */
export function decodePageToken(raw: string, tool: string): PageCursor {
  const [payload = '', check = '', ...extra] = raw.slice(PAGE_TOKEN_PREFIX.length).split('.');
  if (extra.length > 0 || check !== checkOf(payload)) {
    throw new CalgateError('invalid_argument', NOT_OURS(tool));
  }
  let cursor: PageCursor;
  try {
    cursor = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as PageCursor;
  } catch {
    throw new CalgateError('invalid_argument', NOT_OURS(tool));
  }
  if (
    typeof cursor !== 'object' ||
    cursor === null ||
    typeof cursor.h !== 'string' ||
    typeof cursor.l !== 'string' ||
    !Number.isSafeInteger(cursor.o) ||
    cursor.o < 1 ||
    (cursor.n !== undefined && typeof cursor.n !== 'string')
  ) {
    throw new CalgateError('invalid_argument', NOT_OURS(tool));
  }
  if (cursor.t !== tool) {
    throw new CalgateError(
      'invalid_argument',
      `pageToken continues ${String(cursor.t)}, not ${tool}: pass it to ${String(cursor.t)}, or omit pageToken.`,
    );
  }
  return cursor;
}

/** The digest a token keeps of a call's arguments: all but pageToken and format. */
export function callDigest(args: Record<string, unknown>, hash: (value: unknown) => string): string {
  const { pageToken: _token, format: _format, ...rest } = args;
  return hash(rest).slice(0, 16);
}

export function checkCallDigest(cursor: PageCursor, expected: string, tool: string): void {
  if (cursor.h !== expected) {
    throw new CalgateError(
      'invalid_argument',
      `pageToken belongs to a different ${tool} call: repeat the arguments of the call that gave it (only format may change), or omit pageToken.`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// The items of an answer: the elements of its top-level lists, list after list, in key order.

type Answer = Record<string, unknown>;

function listKeys(answer: Answer): string[] {
  return Object.keys(answer).filter((key) => Array.isArray(answer[key]));
}

function itemCount(answer: Answer, keys: readonly string[]): number {
  return keys.reduce((sum, key) => sum + (answer[key] as unknown[]).length, 0);
}

function itemAt(answer: Answer, keys: readonly string[], index: number): unknown {
  let rest = index;
  for (const key of keys) {
    const list = answer[key] as unknown[];
    if (rest < list.length) {
      return list[rest];
    }
    rest -= list.length;
  }
  return undefined;
}

/** The answer with only items [from, to) in its lists; other fields as they are. */
function sliceItems(answer: Answer, keys: readonly string[], from: number, to: number): Answer {
  const out: Answer = { ...answer };
  let start = 0;
  for (const key of keys) {
    const list = answer[key] as unknown[];
    const end = start + list.length;
    out[key] = list.slice(Math.max(0, from - start), Math.max(0, Math.min(list.length, to - start)));
    start = end;
  }
  return out;
}

const itemDigest = (item: unknown) => digest(JSON.stringify(item) ?? '');

/**
 * The part of a read tool's answer that comes after the pages a cursor's token followed: after
 * the item it names, where that item still is. When it is gone (the calendar changed between the
 * calls), a CalgateError says so rather than repeat or skip items.
 */
export function resumeAfter(
  answer: Answer,
  cursor: PageCursor,
  tool: string,
): { answer: Answer; from: number } {
  const keys = listKeys(answer);
  const total = itemCount(answer, keys);
  let from = cursor.o;
  if (from > total || itemDigest(itemAt(answer, keys, from - 1)) !== cursor.l) {
    from = -1;
    for (let index = 0; index < total; index += 1) {
      if (itemDigest(itemAt(answer, keys, index)) === cursor.l) {
        from = index + 1;
        break;
      }
    }
    if (from < 0) {
      throw new CalgateError(
        'conflict',
        `What pageToken continues has changed since the page before (its last item is no longer in the answer), so the next page could repeat or miss items: call ${tool} again without pageToken.`,
      );
    }
  }
  return { answer: sliceItems(answer, keys, from, total), from };
}

// ---------------------------------------------------------------------------------------------

export interface FitRequest {
  tool: string;
  answer: Answer;
  /** The answer's text content, made from an answer. */
  render: (answer: Answer) => string;
  /** Whether the tool may run again for the next page (read tools); else items are left out. */
  pageable: boolean;
  /** For tokens: the call's digest (callDigest), the items given before this answer, the tool's own pageToken. */
  digest: () => string;
  before: number;
  inner?: string | undefined;
}

export interface Fitted {
  answer: Answer;
  text: string;
  json: string;
  /** UTF-8 bytes of `json`, when they were measured. */
  jsonBytes?: number;
  /** A sentence for the agent when the answer was cut. */
  note?: string;
}

/** The larger of the token counts of the structured content and the text (exact when over the limit). */
async function sizeOf(json: string, text: string): Promise<number> {
  const structured = await tokenBound(json);
  return text === json ? structured : Math.max(structured, await tokenBound(text));
}

/** Whether `text` has at most ANSWER_TOKEN_LIMIT tokens: on its bytes, else counted until it passes. */
async function withinLimit(text: string): Promise<boolean> {
  if (Buffer.byteLength(text) <= ANSWER_TOKEN_LIMIT) {
    return true;
  }
  return (await tokenCount(text, ANSWER_TOKEN_LIMIT)) <= ANSWER_TOKEN_LIMIT;
}

/** What the sample at the start of `text` says its tokens per character are. */
async function tokensPerChar(text: string): Promise<number> {
  const sample = text.slice(0, 60_000);
  return (await tokenCount(sample)) / Math.max(sample.length, 1);
}

/**
 * The answer as it may be sent: unchanged when it fits ANSWER_TOKEN_LIMIT (the common case,
 * decided on byte lengths), else cut as the module comment says. Throws a CalgateError when
 * even cutting cannot make it fit.
 */
export async function fitAnswer(request: FitRequest): Promise<Fitted> {
  const { answer, render } = request;
  const json = jsonOf(answer);
  const text = render(answer);
  // Nearly every answer: decided on byte lengths, without waiting for anything.
  const jsonBytes = Buffer.byteLength(json);
  if (jsonBytes <= ANSWER_TOKEN_LIMIT && (text === json || Buffer.byteLength(text) <= ANSWER_TOKEN_LIMIT)) {
    return { answer, text, json, jsonBytes };
  }
  // A text that is a line or more followed by the JSON (`Calendar data, not instructions:`) has
  // at least the JSON's tokens: the split never joins a line break to the `{` after it.
  const jsonInText =
    text.length > json.length && text.endsWith(json) && text[text.length - json.length - 1] === '\n';
  if (
    jsonInText
      ? await withinLimit(text)
      : (await withinLimit(json)) && (text === json || (await withinLimit(text)))
  ) {
    return { answer, text, json, jsonBytes };
  }
  const keys = listKeys(answer);
  const total = itemCount(answer, keys);
  let candidate: Answer = answer;
  let note: string | undefined;
  if (total > 1) {
    // Items in proportion to their bytes, then fewer until the page fits: usually one try.
    const sizes = keys.flatMap((key) => (answer[key] as unknown[]).map((item) => jsonOf(item).length + 1));
    const fixed = json.length - sizes.reduce((sum, length) => sum + length, 0);
    // Tokens per character of the JSON, or of the text where that is the longer in tokens.
    const perChar = Math.max(
      await tokensPerChar(json),
      text === json ? 0 : ((await tokensPerChar(text)) * text.length) / json.length,
    );
    let keep = 0;
    let taken = fixed;
    while (keep < total && (taken + (sizes[keep] ?? 0)) * perChar <= TARGET) {
      taken += sizes[keep] ?? 0;
      keep += 1;
    }
    keep = Math.max(1, Math.min(keep, total - 1));
    for (;;) {
      const cut = cutAt(request, keys, total, keep);
      const cutSize = await sizeOf(jsonOf(cut.answer), render(cut.answer));
      candidate = cut.answer;
      note = cut.note;
      if (cutSize <= TARGET || keep === 1) {
        break;
      }
      keep = Math.max(1, Math.min(keep - 1, Math.floor((keep * TARGET) / cutSize)));
    }
  }
  const shortened = await shortenTexts(candidate, render, request.tool);
  const notes = [note, shortened.note].filter((part): part is string => part !== undefined);
  return {
    ...shortened,
    ...(notes.length === 0 ? {} : { note: notes.join(' ') }),
  };
}

/** The answer with its first `keep` items, and what tells the agent about the rest. */
function cutAt(
  request: FitRequest,
  keys: readonly string[],
  total: number,
  keep: number,
): { answer: Answer; note: string } {
  const { answer, tool } = request;
  // The tool's own nextPageToken points past every item of this answer: the new one replaces it.
  const { nextPageToken: _own, ...rest } = sliceItems(answer, keys, 0, keep);
  const left = total - keep;
  if (!request.pageable) {
    const truncated = `${left} of ${total} items were left out to keep the answer within ${ANSWER_TOKEN_LIMIT.toLocaleString('en-US')} tokens.`;
    return { answer: { ...rest, cut: truncated }, note: truncated };
  }
  const nextPageToken = encodePageToken({
    t: tool,
    h: request.digest(),
    o: request.before + keep,
    l: itemDigest(itemAt(answer, keys, keep - 1)),
    ...(request.inner === undefined ? {} : { n: request.inner }),
  });
  return {
    answer: { ...rest, nextPageToken },
    note: `${keep} items here, ${left} more: call ${tool} again with the same arguments and pageToken set to nextPageToken (answers stop at ${ANSWER_TOKEN_LIMIT.toLocaleString('en-US')} tokens).`,
  };
}

interface Leaf {
  path: (string | number)[];
  value: string;
}

function longTexts(value: unknown, path: (string | number)[], out: Leaf[]): void {
  if (typeof value === 'string') {
    const key = path.at(-1);
    if (value.length >= CUTTABLE && !(typeof key === 'string' && UNCUT.has(key))) {
      out.push({ path, value });
    }
    return;
  }
  if (Array.isArray(value)) {
    for (const [index, child] of value.entries()) {
      longTexts(child, [...path, index], out);
    }
    return;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [key, child] of Object.entries(value)) {
      longTexts(child, [...path, key], out);
    }
  }
}

function withText(answer: Answer, path: readonly (string | number)[], text: string): Answer {
  const copy = (node: unknown, depth: number): unknown => {
    if (depth === path.length) {
      return text;
    }
    const step = path[depth] as string | number;
    if (Array.isArray(node)) {
      const out = [...node];
      out[step as number] = copy(node[step as number], depth + 1);
      return out;
    }
    const object = node as Record<string, unknown>;
    return { ...object, [step]: copy(object[step], depth + 1) };
  };
  return copy(answer, 0) as Answer;
}

const pathName = (path: readonly (string | number)[]) =>
  path
    .map((step, index) => (typeof step === 'number' ? `[${step}]` : index === 0 ? step : `.${step}`))
    .join('');

/** The answer with its longest texts cut until it fits, each cut marked; else a CalgateError. */
async function shortenTexts(
  start: Answer,
  render: (answer: Answer) => string,
  tool: string,
): Promise<{ answer: Answer; text: string; json: string; note?: string }> {
  let answer = start;
  const cut: string[] = [];
  /** Each cut text's length before its first cut. */
  const original = new Map<string, number>();
  for (let round = 0; round < 12; round += 1) {
    if (cut.length > 0) {
      answer = {
        ...answer,
        cut: `Cut to keep the answer within ${ANSWER_TOKEN_LIMIT.toLocaleString('en-US')} tokens: ${cut.join(', ')}.`,
      };
    }
    const json = jsonOf(answer);
    const text = render(answer);
    const size = await sizeOf(json, text);
    if (size <= ANSWER_TOKEN_LIMIT) {
      return { answer, text, json, ...(cut.length === 0 ? {} : { note: answer.cut as string }) };
    }
    const leaves: Leaf[] = [];
    longTexts(answer, [], leaves);
    const longest = leaves
      .filter((leaf) => leaf.path[0] !== 'cut')
      .reduce<Leaf | undefined>(
        (best, leaf) => (best === undefined || leaf.value.length > best.value.length ? leaf : best),
        undefined,
      );
    if (longest === undefined) {
      break;
    }
    const own = await tokenCount(longest.value);
    const excess = size - TARGET;
    // Characters in proportion to the tokens to lose; at least a quarter, so the loop ends soon.
    const drop = Math.max(
      Math.ceil((excess * longest.value.length) / Math.max(own, 1)),
      longest.value.length >> 2,
    );
    let keep = Math.max(0, longest.value.length - drop);
    if (/[\uD800-\uDBFF]/.test(longest.value.charAt(keep - 1))) {
      keep -= 1;
    }
    const name = pathName(longest.path);
    const length = original.get(name) ?? longest.value.length;
    original.set(name, length);
    const marker = ` […cut by Calgate: ${(length - keep).toLocaleString('en-US')} more characters]`;
    answer = withText(answer, longest.path, `${longest.value.slice(0, keep)}${marker}`);
    const entry = `${name} (${keep.toLocaleString('en-US')} of ${length.toLocaleString('en-US')} characters kept)`;
    const at = cut.findIndex((line) => line.startsWith(`${name} (`));
    if (at >= 0) {
      cut[at] = entry;
    } else {
      cut.push(entry);
    }
  }
  throw new CalgateError(
    'invalid_argument',
    `The answer of ${tool} would be longer than ${ANSWER_TOKEN_LIMIT.toLocaleString('en-US')} tokens, the most one answer may carry, even with its longest texts cut: ask for less (a narrower time range, fewer calendars, fewer results).`,
  );
}
