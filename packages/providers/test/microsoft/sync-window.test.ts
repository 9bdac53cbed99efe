/**
 * The window of Outlook's mirror (sync.ts): a full sync asks calendarView/delta for a window
 * anchored at its own start (400 days back, 760 ahead) in its first request only, and the
 * anchor travels with every page and delta link; an incremental sync from a window anchored more
 * than 30 days ago is "cursor expired", so the sync starts over with a window around the new now.
 * microsoftMirrorCovers promises only what every window re-anchored within 30 days holds.
 */
import { describe, expect, it } from 'vitest';
import type { GraphClient, GraphPage, GraphRequest } from '../../src/microsoft/client.ts';
import {
  MICROSOFT_MIRROR_AFTER_MS,
  MICROSOFT_MIRROR_BEFORE_MS,
  MICROSOFT_MIRROR_REANCHOR_MS,
  microsoftMirrorCovers,
  microsoftSyncSource,
} from '../../src/microsoft/sync.ts';
import type { SyncCalendar, SyncStep } from '../../src/mirror/source.ts';

const DAY = 86_400_000;
const CALENDAR: SyncCalendar = { calendarId: 'cal_1', tenantId: 'ten_1', externalId: 'AAMkCal=' };
const T0 = Date.parse('2026-06-01T12:00:00Z');
const DELTA = 'https://graph.example/v1.0/me/calendars/AAMkCal=/calendarView/delta?$deltatoken=abc';
const NEXT = 'https://graph.example/v1.0/me/calendars/AAMkCal=/calendarView/delta?$skiptoken=xyz';

/** A Graph client that answers pages in turn and records what it was asked. */
function fakeGraph(pages: GraphPage<unknown>[]) {
  const asked: { request: GraphRequest; link: string | undefined }[] = [];
  const client = {
    async page(request: GraphRequest, link?: string) {
      asked.push({ request, link });
      const next = pages.shift();
      if (next === undefined) {
        throw new Error('no page left');
      }
      return next;
    },
  } as unknown as GraphClient;
  return { client, asked };
}

const cursorOf = (step: SyncStep): string => {
  if (step.kind !== 'batch' || !('cursor' in step.next)) {
    throw new Error(`expected a batch ending in a cursor, got ${JSON.stringify(step)}`);
  }
  return step.next.cursor;
};

describe('the Outlook mirror window', () => {
  it('a full sync sends the window around now in its first request only, then follows the links as given', async () => {
    let now = T0;
    const { client, asked } = fakeGraph([
      { value: [], nextLink: NEXT },
      { value: [], deltaLink: DELTA },
    ]);
    const source = microsoftSyncSource(client, { now: () => now });
    const first = await source.full(CALENDAR, { pageToken: null });
    expect(asked[0]?.link).toBeUndefined();
    expect(asked[0]?.request.query).toEqual({
      startDateTime: new Date(T0 - MICROSOFT_MIRROR_BEFORE_MS).toISOString().replace('.000Z', 'Z'),
      endDateTime: new Date(T0 + MICROSOFT_MIRROR_AFTER_MS).toISOString().replace('.000Z', 'Z'),
    });
    expect(first.kind === 'batch' && first.next).toEqual({ pageToken: `${T0}|${NEXT}` });
    // Later pages of the same full sync keep the anchor they started with, whatever the time.
    now = T0 + 2 * DAY;
    const second = await source.full(CALENDAR, {
      pageToken: (first as { next: { pageToken: string } }).next.pageToken,
    });
    expect(asked[1]).toMatchObject({ link: NEXT });
    expect(asked[1]?.request.query).toBeUndefined();
    expect(cursorOf(second)).toBe(`${T0}|${DELTA}`);
  });

  it('the window is 400 days back and 760 ahead, re-anchored after 30 days', () => {
    expect(MICROSOFT_MIRROR_BEFORE_MS).toBe(400 * DAY);
    expect(MICROSOFT_MIRROR_AFTER_MS).toBe(760 * DAY);
    expect(MICROSOFT_MIRROR_REANCHOR_MS).toBe(30 * DAY);
  });

  it('incremental syncs follow the delta link up to 30 days after the anchor; later the cursor has expired', async () => {
    let now = T0 + 30 * DAY;
    const { client, asked } = fakeGraph([{ value: [], deltaLink: `${DELTA}2` }]);
    const source = microsoftSyncSource(client, { now: () => now });
    const cursor = `${T0}|${DELTA}`;
    // Exactly 30 days on: still the old window; the next cursor keeps its anchor.
    const step = await source.changes(CALENDAR, { cursor, pageToken: null });
    expect(asked.map((a) => a.link)).toEqual([DELTA]);
    expect(asked[0]?.request.query).toBeUndefined();
    expect(cursorOf(step)).toBe(`${T0}|${DELTA}2`);
    // A millisecond later the window is too old: Graph is not asked, the sync starts over.
    now = T0 + 30 * DAY + 1;
    expect(await source.changes(CALENDAR, { cursor, pageToken: null })).toEqual({ kind: 'expired' });
    expect(await source.changes(CALENDAR, { cursor, pageToken: `${T0}|${NEXT}` })).toEqual({
      kind: 'expired',
    });
    expect(asked).toHaveLength(1);
  });

  it('the full sync that follows re-anchors the window around the new now', async () => {
    const now = T0 + 31 * DAY;
    const { client, asked } = fakeGraph([{ value: [], deltaLink: DELTA }]);
    const source = microsoftSyncSource(client, { now: () => now });
    const step = await source.full(CALENDAR, { pageToken: null });
    expect(asked[0]?.request.query).toEqual({
      startDateTime: new Date(now - 400 * DAY).toISOString().replace('.000Z', 'Z'),
      endDateTime: new Date(now + 760 * DAY).toISOString().replace('.000Z', 'Z'),
    });
    expect(cursorOf(step)).toBe(`${now}|${DELTA}`);
  });

  it('a cursor or page token that is not `<anchor>|<link>` is an expired cursor, not a request', async () => {
    const { client, asked } = fakeGraph([]);
    const source = microsoftSyncSource(client, { now: () => T0 });
    for (const token of ['', DELTA, '|x', 'soon|x']) {
      expect(await source.changes(CALENDAR, { cursor: token, pageToken: null })).toEqual({ kind: 'expired' });
    }
    expect(await source.full(CALENDAR, { pageToken: 'no-anchor' })).toEqual({ kind: 'expired' });
    expect(asked).toEqual([]);
  });
});

describe('microsoftMirrorCovers', () => {
  const now = T0;
  const from = now - 370 * DAY;
  const to = now + 730 * DAY;

  it('covers 370 days back to 730 ahead of now, bounds included; a millisecond beyond either is read from Graph', () => {
    expect(microsoftMirrorCovers(from, to, now)).toBe(true);
    expect(microsoftMirrorCovers(now, now + DAY, now)).toBe(true);
    expect(microsoftMirrorCovers(from - 1, to, now)).toBe(false);
    expect(microsoftMirrorCovers(from, to + 1, now)).toBe(false);
  });

  it('an open-ended listing is never covered', () => {
    expect(microsoftMirrorCovers(undefined, now + DAY, now)).toBe(false);
    expect(microsoftMirrorCovers(now, undefined, now)).toBe(false);
    expect(microsoftMirrorCovers(undefined, undefined, now)).toBe(false);
  });

  it('what it covers lies inside every window anchored within the last 30 days', () => {
    for (const age of [0, 1, 15, 29.5, 30]) {
      const anchor = now - age * DAY;
      const window = { from: anchor - MICROSOFT_MIRROR_BEFORE_MS, to: anchor + MICROSOFT_MIRROR_AFTER_MS };
      expect(window.from, `anchored ${age} days ago`).toBeLessThanOrEqual(from);
      expect(window.to, `anchored ${age} days ago`).toBeGreaterThanOrEqual(to);
    }
  });
});
