import { PROMPT_PLACEHOLDERS } from '@calgate/tools';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway, textOf } from './harness.ts';

/** A tool call as a prompt spells it out: `tool with {json}`. */
interface ExampleCall {
  tool: string;
  args: Record<string, unknown>;
}

/** Every `tool with {…}` in a prompt's text, in order (the JSON read up to its matching brace). */
function callsIn(text: string): ExampleCall[] {
  const calls: ExampleCall[] = [];
  for (const match of text.matchAll(/\b([a-z_]+) with \{/g)) {
    const from = (match.index ?? 0) + match[0].length - 1;
    let depth = 0;
    let inString = false;
    let end = from;
    for (let i = from; i < text.length; i++) {
      const char = text[i];
      if (inString) {
        if (char === '\\') {
          i++;
        } else if (char === '"') {
          inString = false;
        }
      } else if (char === '"') {
        inString = true;
      } else if (char === '{') {
        depth++;
      } else if (char === '}') {
        depth--;
        if (depth === 0) {
          end = i;
          break;
        }
      }
    }
    calls.push({ tool: match[1] as string, args: JSON.parse(text.slice(from, end + 1)) });
  }
  return calls;
}

/** An RFC 3339 instant `minutes` later, written with the same offset. */
function later(instant: string, minutes: number): string {
  const offset = /([+-])(\d{2}):(\d{2})$/.exec(instant);
  const offsetMinutes =
    offset === null ? 0 : (offset[1] === '-' ? -1 : 1) * (Number(offset[2]) * 60 + Number(offset[3]));
  const local = new Date(Date.parse(instant) + (minutes + offsetMinutes) * 60_000);
  return `${local.toISOString().slice(0, 19)}${offset === null ? 'Z' : offset[0]}`;
}

/** Replaces the placeholders the prompts use; any other `<…>` is left for the check to catch. */
function filled(value: unknown, values: Record<string, string>): unknown {
  if (typeof value === 'string') {
    return values[value] ?? value;
  }
  if (Array.isArray(value)) {
    return value.map((item) => filled(item, values));
  }
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, filled(item, values)]));
  }
  return value;
}

const unfilled = (args: unknown) => JSON.stringify(args).match(/<[^<>"]*>/g) ?? [];

/**
 * Every tool call the prompts teach is made as written, over MCP against a seeded gateway, and
 * none is refused: an agent copying a prompt's call must not meet an input error. Placeholders
 * are filled as an agent would: the slot from the finder's answer, a title.
 */
describe('prompt examples run as written', () => {
  let gw: TestGateway;
  let everything: Client;
  let bookingOnly: Client;
  let work: string;
  let made = 0;

  beforeAll(async () => {
    gw = await startTestGateway(HIGH_RATE_LIMITS);
    const { tenancy, keys } = gw.runtime;
    const tenant = await tenancy.createTenant('Prompts');
    work = await gw.localCalendar(tenant.id, 'Work', 'Europe/Berlin');
    const home = await gw.localCalendar(tenant.id, 'Home', 'Europe/Berlin');
    const grants = [
      { calendarId: work, read: true, write: true },
      { calendarId: home, read: true, write: false },
    ];
    const all = await keys.create(tenant.id, {
      name: 'all',
      toolsets: ['calendar', 'booking', 'search', 'rules', 'scheduler', 'ics'],
      grants,
    });
    const booking = await keys.create(tenant.id, { name: 'booking', toolsets: ['booking'], grants });
    everything = await connectClient(gw.mcpUrl, all.secret);
    bookingOnly = await connectClient(gw.mcpUrl, booking.secret);
  }, 60_000);

  afterAll(async () => {
    await everything?.close();
    await bookingOnly?.close();
    await gw?.stop();
  });

  /** Gets the prompt, then makes each of its calls in order; returns the tools called. */
  async function runPrompt(client: Client, name: string, args: Record<string, string>): Promise<string[]> {
    const prompt = await client.getPrompt({ name, arguments: args });
    const text = (prompt.messages[0]?.content as { text?: string } | undefined)?.text ?? '';
    const calls = callsIn(text);
    expect(calls.length, text).toBeGreaterThan(0);
    const minutes = Number(args.durationMinutes ?? 30);
    const values: Record<string, string> = {};
    const called: string[] = [];
    for (const call of calls) {
      made += 1;
      values[PROMPT_PLACEHOLDERS.title] = `Prompt example ${made}`;
      const filledArgs = filled(call.args, values) as Record<string, unknown>;
      expect(unfilled(filledArgs), `${name}: ${call.tool} leaves ${unfilled(filledArgs)} unfilled`).toEqual(
        [],
      );
      const result = await client.callTool({ name: call.tool, arguments: filledArgs });
      expect(
        result.isError,
        `${name}: ${call.tool} ${JSON.stringify(filledArgs)} → ${textOf(result)}`,
      ).toBeFalsy();
      called.push(call.tool);
      // The slot an agent would pick: the first free one the finder reports.
      const out = result.structuredContent as { free?: { start: string }[]; slots?: { start: string }[] };
      const slot = out.free?.[0] ?? out.slots?.[0];
      if (slot !== undefined && values[PROMPT_PLACEHOLDERS.slotStart] === undefined) {
        values[PROMPT_PLACEHOLDERS.slotStart] = slot.start;
        values[PROMPT_PLACEHOLDERS.slotEnd] = later(slot.start, minutes);
      }
    }
    return called;
  }

  it('offers the prompts this test covers', async () => {
    expect((await everything.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual([
      'plan_my_day',
      'find_meeting_time',
      'weekly_review',
    ]);
    expect((await bookingOnly.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual([
      'find_meeting_time',
    ]);
  });

  it('plan_my_day: its calls run as written', async () => {
    expect(await runPrompt(everything, 'plan_my_day', {})).toEqual(['list_events', 'find_free_time']);
    await runPrompt(everything, 'plan_my_day', {
      date: '2026-12-01',
      timeZone: 'Asia/Tokyo',
      calendarId: work,
    });
    await runPrompt(everything, 'plan_my_day', { date: '2026-12-02', calendarId: 'Work' });
  });

  it('find_meeting_time: finding and then creating the meeting run as written', async () => {
    expect(
      await runPrompt(everything, 'find_meeting_time', {
        durationMinutes: '45',
        attendees: 'ann@example.com, bob@example.com',
        within: '2026-12-07/2026-12-09',
        timeZone: 'Europe/Berlin',
      }),
    ).toEqual(['find_free_time', 'create_event']);
    await runPrompt(everything, 'find_meeting_time', { durationMinutes: '30', within: '3' });
  });

  it('find_meeting_time with the booking toolset alone: find_free_slots, then book_slot', async () => {
    expect(
      await runPrompt(bookingOnly, 'find_meeting_time', {
        durationMinutes: '30',
        attendees: 'carla@example.com',
        within: '2026-12-10',
      }),
    ).toEqual(['find_free_slots', 'book_slot']);
  });

  it('weekly_review: its calls run as written', async () => {
    expect(
      await runPrompt(everything, 'weekly_review', { weekStart: '2026-11-30', project: 'Acme' }),
    ).toEqual(['list_events', 'get_time_summary', 'list_bookings', 'list_events']);
    await runPrompt(everything, 'weekly_review', { timeZone: 'America/New_York' });
  });
});
