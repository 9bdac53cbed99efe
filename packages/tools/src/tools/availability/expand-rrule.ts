import { CalgateError, validateTimeZone } from '@calgate/core';
import { z } from 'zod';
import { defineTool } from '../../catalogue.ts';
import { format, formatText, rememberAnswer } from '../../format.ts';
import { timeZoneOut } from '../../local-time.ts';
import { type ExpansionRequest, expansionAnswer, MAX_EXPANDED, PAGE_SIZE } from './expansion.ts';
import { readPageToken } from './page-token.ts';
import { range } from './window.ts';

const localDateTime = z.string().max(40);
/**
 * From this many instances to make (a page, and for a COUNT rule the instances before it) the
 * answer is made in a worker thread, where the gateway runs a pool: a page of PAGE_SIZE costs
 * less than the hand-over.
 */
const OFFLOAD_FROM = 2_000;
const COUNT_RULE = /(^|[;:])COUNT=/i;

/**
 * The instances a call makes: its page, and for a COUNT rule every instance before it again (a
 * token that names no position is refused before any work).
 */
function workOf(args: { rrule: string; count: number; pageToken?: string | undefined }): number {
  const delivered = Math.min(args.count, Math.max(0, Number(args.pageToken?.split('.')[2] ?? 0) || 0));
  return Math.min(PAGE_SIZE, args.count - delivered) + (COUNT_RULE.test(args.rrule) ? delivered : 0);
}

export const expandRrule = defineTool({
  name: 'expand_rrule',
  toolset: 'calendar',
  title: 'Expand recurrence rule',
  description: 'To list the dates a recurrence rule (RRULE) gives, such as the last Friday of every month.',
  notes:
    'Instances of an RFC 5545 RRULE, in timeZone with its offset; dtstart (local YYYY-MM-DDTHH:MM:SS in timeZone) is the first, even off the rule (then warnings). DST gap: offset before it; ambiguous: first occurrence; UNTIL in UTC.',
  access: 'none',
  // Pages that cost little run at once; costly ones (late pages of a COUNT rule) wait their turn.
  cpuBound: (args) => workOf(args) >= OFFLOAD_FROM,
  structuredOnlyFor2026: true,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: z.strictObject({
    rrule: z.string().min(1).max(2000).describe('e.g. FREQ=WEEKLY;BYDAY=MO,WE'),
    dtstart: localDateTime,
    timeZone: z.string().min(1).max(64),
    durationMinutes: z.number().int().min(0).max(10_080).default(60),
    count: z
      .number()
      .int()
      .min(1)
      .default(100)
      .describe(`In all, at most ${MAX_EXPANDED}; ${PAGE_SIZE} a page.`),
    exdates: z.array(localDateTime).max(1000).optional().describe('Local, like dtstart.'),
    pageToken: z.string().min(1).max(200).optional(),
    format,
  }),
  output: z.object({
    timeZone: timeZoneOut,
    instances: z.array(range),
    truncated: z.boolean().describe('The rule gives more than count; raise count.'),
    nextPageToken: z.string().optional().describe('More of count follow: pass as pageToken.'),
    warnings: z.array(z.string()).optional(),
  }),
  exampleIntent: "On which dates does 'the last Friday of every month' fall this year?",
  example: {
    rrule: 'FREQ=MONTHLY;BYDAY=FR;BYSETPOS=-1',
    dtstart: '2026-01-30T10:00:00',
    timeZone: 'America/New_York',
    count: 12,
  },
  exampleResult: {
    instances: [
      { start: '2026-01-30T10:00:00-05:00', end: '2026-01-30T11:00:00-05:00' },
      { start: '2026-03-27T10:00:00-04:00', end: '2026-03-27T11:00:00-04:00' },
    ],
    truncated: true,
  },
  async run(args, { budget, cpu }) {
    if (args.count > MAX_EXPANDED) {
      throw new CalgateError(
        'invalid_argument',
        `count ${args.count} is over the cap of ${MAX_EXPANDED} instances per call: ask for fewer, or narrow the rule (UNTIL, COUNT) and call again from a later dtstart.`,
      );
    }
    const zone = validateTimeZone(args.timeZone);
    if (!zone.ok) {
      throw zone.error;
    }
    const request: ExpansionRequest = {
      rrule: args.rrule,
      dtstart: args.dtstart,
      timeZone: zone.value,
      durationMinutes: args.durationMinutes,
      count: args.count,
      exdates: args.exdates ?? [],
    };
    if (args.pageToken !== undefined) {
      request.page = readPageToken(request, args.pageToken);
    }
    const work = workOf(args);
    // Charged by the instances this page makes, before any work: the request's budget bounds the CPU.
    budget.spend('instances', work);
    // A costly page is made whole in a worker thread (the expansion, its JSON and its text, each
    // once), off the event loop; a page of PAGE_SIZE costs less than the hand-over.
    const answer =
      cpu === undefined || work < OFFLOAD_FROM
        ? expansionAnswer({ request, format: args.format })
        : await cpu.run('expandRruleAnswer', { request, format: args.format });
    rememberAnswer(answer.result, answer.json, args.format, answer.text);
    return answer.result;
  },
  text: (result, args) => formatText(result, args.format),
});
