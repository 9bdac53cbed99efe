import { decode } from '@toon-format/toon';
import { describe, expect, it } from 'vitest';
import { CalendarAccess, callTool, catalogue } from '../src/index.ts';

// expand_rrule needs no calendar: a key without grants may call it.
const access = new CalendarAccess({ tenantId: 'tnt_1', keyId: 'key_1', calendars: [] }, () => {
  throw new Error('expand_rrule must not reach a provider');
});

async function expand(args: Record<string, unknown>) {
  const entry = catalogue().get('expand_rrule');
  if (entry === undefined) {
    throw new Error('expand_rrule is not in the catalogue');
  }
  const result = await callTool(
    { catalogue: catalogue(), access, requestId: 'req_1', version: 't' },
    entry,
    args,
    new AbortController().signal,
  );
  const text = (result.content as { text: string }[])[0]?.text ?? '';
  return {
    result,
    text,
    out: result.structuredContent as { instances: { start: string; end: string }[]; truncated: boolean },
  };
}

const starts = (out: { instances: { start: string }[] }) => out.instances.map((i) => i.start);

describe('expand_rrule', () => {
  it('is closed-world, read-only and needs no grant', () => {
    const entry = catalogue().get('expand_rrule');
    expect(entry?.definition.access).toBe('none');
    expect(entry?.definition.annotations).toEqual({
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    });
  });

  it('reads a local time in a DST gap with the offset before the gap', async () => {
    const { out } = await expand({
      rrule: 'FREQ=DAILY;COUNT=2',
      dtstart: '2026-03-08T02:30:00',
      timeZone: 'America/New_York',
    });
    expect(out.instances).toEqual([
      { start: '2026-03-08T03:30:00-04:00', end: '2026-03-08T04:30:00-04:00' },
      { start: '2026-03-09T02:30:00-04:00', end: '2026-03-09T03:30:00-04:00' },
    ]);
    expect(out.truncated).toBe(false);
  });

  it('reads an ambiguous local time as its first occurrence', async () => {
    const { out } = await expand({
      rrule: 'FREQ=DAILY;COUNT=2',
      dtstart: '2026-10-25T02:30:00',
      timeZone: 'Europe/Berlin',
      durationMinutes: 30,
    });
    expect(out.instances).toEqual([
      { start: '2026-10-25T02:30:00+02:00', end: '2026-10-25T02:00:00+01:00' },
      { start: '2026-10-26T02:30:00+01:00', end: '2026-10-26T03:00:00+01:00' },
    ]);
  });

  it('keeps one instance where Apia skipped 2011-12-30 (both wall-clock days name one instant)', async () => {
    const { out } = await expand({
      rrule: 'FREQ=DAILY',
      dtstart: '2011-12-28T10:00:00',
      timeZone: 'Pacific/Apia',
      count: 4,
    });
    expect(starts(out)).toEqual([
      '2011-12-28T10:00:00-10:00',
      '2011-12-29T10:00:00-10:00',
      '2011-12-31T10:00:00+14:00',
      '2012-01-01T10:00:00+14:00',
    ]);
    expect(out.truncated).toBe(true);
  });

  it('handles 45-minute offsets (Kathmandu) and UNTIL in UTC', async () => {
    const { out } = await expand({
      rrule: 'FREQ=WEEKLY;UNTIL=20260112T031500Z',
      dtstart: '2026-01-05T09:00:00',
      timeZone: 'Asia/Kathmandu',
    });
    expect(starts(out)).toEqual(['2026-01-05T09:00:00+05:45', '2026-01-12T09:00:00+05:45']);
  });

  it('handles BYSETPOS, negative BYMONTHDAY, BYYEARDAY, BYWEEKNO with WKST, leap days', async () => {
    const lastFriday = await expand({
      rrule: 'FREQ=MONTHLY;BYDAY=FR;BYSETPOS=-1',
      dtstart: '2026-01-30T10:00:00',
      timeZone: 'America/New_York',
      count: 3,
    });
    expect(starts(lastFriday.out)).toEqual([
      '2026-01-30T10:00:00-05:00',
      '2026-02-27T10:00:00-05:00',
      '2026-03-27T10:00:00-04:00',
    ]);
    expect(lastFriday.out.truncated).toBe(true);
    const lastDay = await expand({
      rrule: 'FREQ=MONTHLY;BYMONTHDAY=-1;COUNT=3',
      dtstart: '2026-01-31T09:00:00',
      timeZone: 'UTC',
    });
    expect(starts(lastDay.out)).toEqual([
      '2026-01-31T09:00:00Z',
      '2026-02-28T09:00:00Z',
      '2026-03-31T09:00:00Z',
    ]);
    const yearEnd = await expand({
      rrule: 'FREQ=YEARLY;BYYEARDAY=-1;COUNT=2',
      dtstart: '2027-12-31T09:00:00',
      timeZone: 'UTC',
    });
    expect(starts(yearEnd.out)).toEqual(['2027-12-31T09:00:00Z', '2028-12-31T09:00:00Z']);
    const week1 = await expand({
      rrule: 'FREQ=YEARLY;BYWEEKNO=1;BYDAY=MO;WKST=SU;COUNT=2',
      dtstart: '2026-01-05T09:00:00',
      timeZone: 'UTC',
    });
    expect(starts(week1.out)).toEqual(['2026-01-05T09:00:00Z', '2027-01-04T09:00:00Z']);
    const leap = await expand({
      rrule: 'FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29',
      dtstart: '2024-02-29T12:00:00',
      timeZone: 'UTC',
      count: 3,
    });
    expect(starts(leap.out)).toEqual([
      '2024-02-29T12:00:00Z',
      '2028-02-29T12:00:00Z',
      '2032-02-29T12:00:00Z',
    ]);
  });

  it('drops exdates, read as local times like dtstart', async () => {
    const { out } = await expand({
      rrule: 'RRULE:FREQ=WEEKLY;BYDAY=MO,WE;UNTIL=20260114T080000Z',
      dtstart: '2026-01-05T09:00:00',
      timeZone: 'Europe/Berlin',
      exdates: ['2026-01-07T09:00:00'],
    });
    expect(starts(out)).toEqual([
      '2026-01-05T09:00:00+01:00',
      '2026-01-12T09:00:00+01:00',
      '2026-01-14T09:00:00+01:00',
    ]);
  });

  it('returns up to 10,000 instances, 344 a page, and refuses more with a clear error', async () => {
    const rule = { rrule: 'FREQ=DAILY', dtstart: '2026-01-05T09:00:00', timeZone: 'UTC', count: 10_000 };
    const instances: { start: string }[] = [];
    let page = await expand(rule);
    for (;;) {
      instances.push(...page.out.instances);
      const token = (page.out as { nextPageToken?: string }).nextPageToken;
      if (token === undefined) {
        break;
      }
      expect(page.out.instances).toHaveLength(344);
      expect(page.out.truncated).toBe(false);
      page = await expand({ ...rule, pageToken: token });
    }
    expect(instances).toHaveLength(10_000);
    expect(instances[9_999]?.start).toBe('2053-05-22T09:00:00Z');
    expect(page.out.truncated).toBe(true);
    const over = await expand({
      rrule: 'FREQ=DAILY',
      dtstart: '2026-01-05T09:00:00',
      timeZone: 'UTC',
      count: 10_001,
    });
    expect(over.result.isError).toBe(true);
    expect(over.text).toMatch(/over the cap of 10000 instances per call: ask for fewer, or narrow the rule/);
  });

  it("reports the core parser's message for bad rules, and bad dtstart, exdates and zones precisely", async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ rrule: 'FREQ=FORTNIGHTLY' }, /FREQ must be one of YEARLY, MONTHLY, WEEKLY/],
      [{ rrule: 'FREQ=DAILY;COUNT=3;UNTIL=20260101T000000Z' }, /COUNT and UNTIL cannot both be given/],
      [{ rrule: 'FREQ=DAILY;BYWEEKNO=1' }, /BYWEEKNO/],
      [
        { dtstart: '2026-01-05T09:00:00Z' },
        /dtstart '2026-01-05T09:00:00Z' must be a local date-time YYYY-MM-DDTHH:MM:SS without offset/,
      ],
      [{ dtstart: '2026-02-30T09:00:00' }, /2026-02 has days 01–28/],
      [{ exdates: ['2026-01-07'] }, /exdates '2026-01-07' must be a local date-time/],
      [{ timeZone: 'Europe/Nowhere' }, /Unknown time zone 'Europe\/Nowhere'/],
      [{ count: 0 }, /count/],
      [{ until: 'x' }, /Unknown property 'until'/],
    ];
    for (const [patch, message] of cases) {
      const { result, text } = await expand({
        rrule: 'FREQ=DAILY',
        dtstart: '2026-01-05T09:00:00',
        timeZone: 'UTC',
        ...patch,
      });
      expect(result.isError, JSON.stringify(patch)).toBe(true);
      expect(text, JSON.stringify(patch)).toMatch(message);
    }
  });

  it('answers TOON that decodes to the structured content', async () => {
    const { result, text } = await expand({
      rrule: 'FREQ=DAILY;COUNT=3',
      dtstart: '2026-01-05T09:00:00',
      timeZone: 'UTC',
      format: 'toon',
    });
    expect(text).not.toMatch(/^\{/);
    expect(decode(text)).toEqual(result.structuredContent);
  });
});
