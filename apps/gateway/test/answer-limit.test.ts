/**
 * No tool answer is longer than 25,000 o200k tokens, its text and its structured content each:
 * answers that grow with data page with pageToken/nextPageToken, and following the tokens gives
 * every item exactly once, in order; a single item too long on its own is cut, with a marker.
 * Over HTTP with the official MCP SDK client, on real Postgres.
 */
import { searchDocument } from '@calgate/core';
import type { Client } from '@modelcontextprotocol/client';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway, textOf } from './harness.ts';

const LIMIT = 25_000;
const PLAIN = { disallowedSpecial: new Set<string>() };
const tokens = (text: string) => encode(text, PLAIN).length;

const WORDS =
  'budget review roadmap hiring vendor contract launch metrics quarterly offsite planning design sprint retro customer escalation migration database security audit invoice travel Lisbon Berlin workshop agenda minutes follow-up owner deadline risk mitigation dependency forecast pipeline onboarding training feedback survey analytics dashboard release candidate hotfix incident postmortem capacity staffing interview panel offer negotiation legal compliance privacy'.split(
    ' ',
  );

/** Varied prose of about `length` characters (a seeded generator: the same every run). */
function prose(seed: number, length: number): string {
  let state = seed * 2_654_435_761;
  const out: string[] = [];
  let size = 0;
  while (size < length) {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    const word = WORDS[state % WORDS.length] as string;
    out.push(state % 7 === 0 ? `${word} #${state % 9973}` : word);
    size += word.length + 1;
  }
  return out.join(' ');
}

interface Row {
  id: string;
  summary: string;
  description: string | null;
  start: Date;
  end: Date;
}

/** Ids of long events (one a day from 2026-03-02), short busy events (2028 Q1) and one huge event. */
const LONG: Row[] = Array.from({ length: 150 }, (_, index) => {
  const start = new Date(Date.UTC(2026, 2, 2 + index, 9, 0));
  return {
    id: `long${String(index).padStart(4, '0')}`,
    summary: `Quarterly notes ${index}`,
    description: `Quarterly ${prose(index + 1, 2400)}`,
    start,
    end: new Date(start.getTime() + 3_600_000),
  };
});
const SHORT: Row[] = Array.from({ length: 91 * 10 }, (_, index) => {
  const day = Math.floor(index / 10);
  const start = new Date(Date.UTC(2028, 0, 1 + day, 6 + (index % 10), 0));
  return {
    id: `short${String(index).padStart(5, '0')}`,
    summary: `Standup ${index}`,
    description: null,
    start,
    end: new Date(start.getTime() + 15 * 60_000),
  };
});
const HUGE: Row = {
  id: 'handbook0001',
  summary: 'Handbook',
  description: prose(99, 400_000),
  start: new Date(Date.UTC(2027, 5, 1, 9, 0)),
  end: new Date(Date.UTC(2027, 5, 1, 10, 0)),
};

async function insertRows(gw: TestGateway, calendarId: string, rows: readonly Row[]): Promise<void> {
  const records = rows.map((row) => ({
    calendar_id: calendarId,
    id: row.id,
    ical_uid: `${row.id}@calgate.test`,
    summary: row.summary,
    description: row.description,
    start_at: row.start.toISOString(),
    end_at: row.end.toISOString(),
    start_time_zone: 'UTC',
    end_time_zone: 'UTC',
    recurrence: [],
    search_doc: searchDocument({ summary: row.summary, description: row.description }),
    etag: `"${row.id}"`,
  }));
  const columns = Object.keys(records[0] ?? {}).join(', ');
  await gw.db.pool.query(
    `INSERT INTO local_events (${columns}, created_at, updated_at)
     SELECT ${columns}, now(), now() FROM json_populate_recordset(NULL::local_events, $1::json)`,
    [JSON.stringify(records)],
  );
}

type Answer = Record<string, unknown>;

describe('tool answers stay within 25,000 tokens', () => {
  let gw: TestGateway;
  let client: Client;
  let calendarId: string;
  let keyId: string;
  let tenantId: string;

  beforeAll(async () => {
    gw = await startTestGateway(HIGH_RATE_LIMITS);
    const owner = await gw.seedTenant('Owner');
    keyId = owner.keyId;
    tenantId = owner.tenantId;
    calendarId = await gw.localCalendar(owner.tenantId, 'Work', 'UTC');
    await gw.grant(owner.tenantId, owner.keyId, calendarId, { read: true, write: true });
    await insertRows(gw, calendarId, [...LONG, ...SHORT, HUGE]);
    client = await connectClient(gw.mcpUrl, owner.secret);
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await gw?.stop();
  });

  /** One call, checked against the limit: its text (all of it) and its structured content. */
  async function call(name: string, args: Answer): Promise<{ out: Answer; text: string; isError: boolean }> {
    const result = await client.callTool({ name, arguments: args });
    const text = textOf(result);
    const out = (result.structuredContent ?? {}) as Answer;
    expect(tokens(text), `${name} text`).toBeLessThanOrEqual(LIMIT);
    expect(tokens(JSON.stringify(out)), `${name} structuredContent`).toBeLessThanOrEqual(LIMIT);
    return { out, text, isError: result.isError === true };
  }

  /** Every page of a call, following nextPageToken; the items of `field` across them. */
  async function allPages(
    name: string,
    args: Answer,
    field: string,
  ): Promise<{ items: Answer[]; pages: Answer[] }> {
    const pages: Answer[] = [];
    let pageToken: string | undefined;
    do {
      const { out, isError, text } = await call(
        name,
        pageToken === undefined ? args : { ...args, pageToken },
      );
      expect(isError, text).toBe(false);
      pages.push(out);
      pageToken = out.nextPageToken as string | undefined;
    } while (pageToken !== undefined && pages.length < 100);
    return { items: pages.flatMap((page) => page[field] as Answer[]), pages };
  }

  it('list_events pages events with long descriptions: every event once, in order, in JSON and TOON', async () => {
    const args = { timeMin: '2026-03-01T00:00:00Z', timeMax: '2026-08-01T00:00:00Z', maxResults: 2500 };
    for (const format of ['json', 'toon']) {
      const { items, pages } = await allPages('list_events', { ...args, format }, 'events');
      expect(pages.length).toBeGreaterThan(2);
      expect(items.map((event) => event.id)).toEqual(LONG.map((row) => row.id));
      expect(items.map((event) => event.description)).toEqual(LONG.map((row) => row.description));
    }
  });

  it("list_events pages within the tool's own pages (maxResults), and the tokens chain across both", async () => {
    const args = { timeMin: '2026-03-01T00:00:00Z', timeMax: '2026-08-01T00:00:00Z', maxResults: 60 };
    const { items, pages } = await allPages('list_events', args, 'events');
    // 150 events in pages of at most 60, each cut to fit: more than the three pages of 60.
    expect(pages.length).toBeGreaterThan(3);
    expect(items.map((event) => event.id)).toEqual(LONG.map((row) => row.id));
  });

  it('search_events pages its matches', async () => {
    const args = {
      query: 'quarterly',
      timeMin: '2026-03-01T00:00:00Z',
      timeMax: '2026-08-01T00:00:00Z',
      maxResults: 250,
    };
    const { items, pages } = await allPages('search_events', args, 'events');
    expect(pages.length).toBeGreaterThan(1);
    expect(items.map((event) => event.id)).toEqual(LONG.map((row) => row.id));
  });

  it('find_free_slots, get_availability and find_free_time page over a long window', async () => {
    const window = {
      timeMin: '2028-01-01T00:00:00Z',
      timeMax: '2028-04-01T00:00:00Z',
      calendarIds: [calendarId],
    };
    const whole = async (name: string, args: Answer, fields: string[]) => {
      const { pages } = await allPages(name, args, fields[0] as string);
      expect(pages.length, name).toBeGreaterThan(1);
      return Object.fromEntries(
        fields.map((field) => [field, pages.flatMap((page) => (page[field] ?? []) as Answer[])]),
      );
    };
    const slots = await whole('find_free_slots', { ...window, minDurationMinutes: 30 }, ['slots']);
    // Free before the first standup, then after each: to the next one, or overnight to the window's end.
    expect(slots.slots).toHaveLength(SHORT.length + 1);
    expect(new Set(slots.slots?.map((slot) => slot.start)).size).toBe(SHORT.length + 1);
    const starts = slots.slots?.map((slot) => Date.parse(slot.start as string)) ?? [];
    expect(starts).toEqual([...starts].sort((a, b) => a - b));

    const availability = await whole('get_availability', { ...window, privacy: 'full' }, ['busy']);
    expect(availability.busy?.map((block) => Date.parse(block.start as string))).toEqual(
      SHORT.map((row) => row.start.getTime()),
    );

    const free = await whole('find_free_time', window, ['busy', 'free']);
    expect(free.busy?.map((block) => Date.parse(block.start as string))).toEqual(
      SHORT.map((row) => row.start.getTime()),
    );
    expect(free.free).toHaveLength(slots.slots?.length ?? -1);
  });

  it('get_event cuts a description too long for one answer, and says so', async () => {
    const { out, text, isError } = await call('get_event', { calendarId, eventId: HUGE.id });
    expect(isError).toBe(false);
    const event = (out.event ?? out) as Answer;
    const description = event.description as string;
    expect(description.length).toBeLessThan(HUGE.description?.length ?? 0);
    expect(
      HUGE.description?.startsWith(description.replace(/ \[…cut by Calgate: [\d,]+ more characters\]$/, '')),
    ).toBe(true);
    expect(description).toMatch(/\[…cut by Calgate: [\d,]+ more characters\]$/);
    const kept = (
      description.length -
      (/ \[…cut by Calgate: [\d,]+ more characters\]$/.exec(description)?.[0].length ?? 0)
    ).toLocaleString('en-US');
    expect(out.cut).toBe(
      `Cut to keep the answer within 25,000 tokens: event.description (${kept} of ${HUGE.description?.length.toLocaleString('en-US')} characters kept).`,
    );
    expect(text).toContain('Cut to keep the answer within 25,000 tokens');
  });

  it('expand_rrule over many instances stays within the limit, and its pages give every instance once', async () => {
    const args = {
      rrule: 'FREQ=MINUTELY;INTERVAL=15',
      dtstart: '2026-01-01T00:00:00',
      timeZone: 'UTC',
      count: 5000,
    };
    const { items } = await allPages('expand_rrule', args, 'instances');
    const starts = items.map((instance) => instance.start);
    expect(new Set(starts).size).toBe(starts.length);
    expect(starts.length).toBeGreaterThan(1000);
  });

  it('fetch cuts the text of an event too long for one answer, and says so', async () => {
    const found = await call('search', { query: 'Handbook' });
    const id = (found.out.results as Answer[] | undefined)?.[0]?.id as string;
    expect(id).toBeDefined();
    const { out, isError } = await call('fetch', { id });
    expect(isError).toBe(false);
    expect(out.text).toMatch(/\[…cut by Calgate: [\d,]+ more characters\]$/);
    expect(out.cut).toMatch(
      /^Cut to keep the answer within 25,000 tokens: text \([\d,]+ of [\d,]+ characters kept\)\.$/,
    );
  });

  it('preview_rule pages its matches (rules toolset)', async () => {
    await gw.db.pool.query(
      "UPDATE api_keys SET toolsets = ARRAY['calendar', 'booking', 'search', 'rules'] WHERE id = $1",
      [keyId],
    );
    gw.forgetKeys(tenantId);
    const args = {
      query: 'title:standup',
      timeMin: '2028-01-01T00:00:00Z',
      timeMax: '2028-04-01T00:00:00Z',
      maxResults: 2500,
    };
    const { items, pages } = await allPages('preview_rule', args, 'matches');
    expect(pages.length).toBeGreaterThan(1);
    expect(items.map((match) => match.eventId)).toEqual(SHORT.map((row) => row.id));
    expect(pages.every((page) => page.matchCount === SHORT.length)).toBe(true);
  });

  it('batch_update_events, a write, is not run again for more: its answer says what it left out', async () => {
    const updates = LONG.slice(0, 50).map((row) => ({ eventId: row.id, calendarId, location: 'Room 7' }));
    const { out, text, isError } = await call('batch_update_events', { updates });
    expect(isError, text).toBe(false);
    expect(out.nextPageToken).toBeUndefined();
    expect(out.succeeded).toBe(50);
    const shown = (out.results as Answer[]).length;
    expect(shown).toBeLessThan(50);
    expect(out.cut).toBe(`${50 - shown} of 50 items were left out to keep the answer within 25,000 tokens.`);
    const { items } = await allPages(
      'list_events',
      { timeMin: '2026-03-01T00:00:00Z', timeMax: '2026-08-01T00:00:00Z', maxResults: 2500 },
      'events',
    );
    expect(items.filter((event) => event.location === 'Room 7').map((event) => event.id)).toEqual(
      LONG.slice(0, 50).map((row) => row.id),
    );
  });

  it('a bad pageToken is refused in one sentence and changes nothing', async () => {
    const args = { timeMin: '2026-03-01T00:00:00Z', timeMax: '2026-08-01T00:00:00Z', maxResults: 2500 };
    const first = await call('list_events', args);
    const token = first.out.nextPageToken as string;
    expect(token).toMatch(/^pg\./);

    const tampered = `${token.slice(0, 10)}${token[10] === 'A' ? 'B' : 'A'}${token.slice(11)}`;
    const bad = await call('list_events', { ...args, pageToken: tampered });
    expect(bad.isError).toBe(true);
    expect(bad.text).toBe(
      'pageToken is not a nextPageToken list_events gave; pass one unchanged, or omit pageToken to start over.',
    );

    const other = await call('list_events', { ...args, maxResults: 2000, pageToken: token });
    expect(other.isError).toBe(true);
    expect(other.text).toMatch(/^pageToken belongs to a different list_events call: repeat the arguments/);

    const elsewhere = await call('search_events', { query: 'quarterly', pageToken: token });
    expect(elsewhere.isError).toBe(true);
    expect(elsewhere.text).toBe(
      'pageToken continues list_events, not search_events: pass it to list_events, or omit pageToken.',
    );

    // The token still works after the refusals, and only format may change between pages.
    const second = await call('list_events', { ...args, format: 'toon', pageToken: token });
    expect(second.isError).toBe(false);
    expect((second.out.events as Answer[])[0]?.id).toBe(LONG[(first.out.events as Answer[]).length]?.id);
  });
});
