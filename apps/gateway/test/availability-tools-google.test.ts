import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectGoogleAccountByCli, startTestEmulator, type TestEmulator } from './google-fixture.ts';
import { connectClient, startTestGateway, type TestGateway, textOf } from './harness.ts';
import { inUtc } from './instants.ts';

const CLIENT = { clientId: 'availability.apps.googleusercontent.com', clientSecret: 'availability-secret' };
const ANN = 'ann@example.com';
const BOB = 'bob@example.com';
const CAROL = 'carol@example.com';
const DAY = '2026-10-26';
const at = (time: string) => `${DAY}T${time}:00Z`;
const timed = (summary: string, from: string, to: string, extra: Record<string, unknown> = {}) => ({
  summary,
  start: { dateTime: at(from) },
  end: { dateTime: at(to) },
  ...extra,
});

describe('availability tools on Google calendars (emulator), over HTTP with the MCP SDK client', () => {
  let emulator: TestEmulator;
  let gw: TestGateway;
  let client: Client;
  const cal: Record<string, string> = {};
  /** Event ids by summary, as list_events gives them. */
  const ids: Record<string, string> = {};

  const call = async (name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args });
    return { result, text: textOf(result), out: result.structuredContent as Record<string, unknown> };
  };

  beforeAll(async () => {
    emulator = await startTestEmulator(CLIENT, {
      accounts: [
        {
          email: ANN,
          timeZone: 'Europe/Berlin',
          events: [
            timed('Planning', '09:00', '10:00'),
            timed('Focus', '11:00', '12:00', { transparency: 'transparent' }),
            timed('Declined', '13:00', '14:00', {
              attendees: [
                { email: ANN, responseStatus: 'declined' },
                { email: BOB, organizer: true, responseStatus: 'accepted' },
              ],
            }),
            { summary: 'Away', start: { date: '2026-10-27' }, end: { date: '2026-10-28' } },
          ],
        },
        { email: BOB, timeZone: 'America/New_York', events: [timed('Standup', '09:30', '10:30')] },
        {
          // Carol shares her calendar with Ann to read: Google shows Ann her private events as
          // times only.
          email: CAROL,
          timeZone: 'Europe/Berlin',
          shares: [{ email: ANN, role: 'reader' }],
          events: [
            timed('Carol 1:1', '09:00', '09:30'),
            timed('Therapy', '10:00', '11:00', { visibility: 'private' }),
          ],
        },
      ],
    });
    gw = await startTestGateway(emulator.env);
    const tenant = await gw.seedTenant('Acme');
    for (const email of [ANN, BOB]) {
      await connectGoogleAccountByCli(gw, emulator, email, 'read');
    }
    client = await connectClient(gw.mcpUrl, tenant.secret);
    const listed = await client.callTool({ name: 'list_calendars', arguments: {} });
    for (const c of (
      listed.structuredContent as { calendars: { id: string; accountEmail: string; summary: string }[] }
    ).calendars) {
      cal[c.summary === CAROL ? 'carol' : c.accountEmail === ANN ? 'ann' : 'bob'] = c.id;
    }
    expect(Object.keys(cal).sort()).toEqual(['ann', 'bob', 'carol']);
    for (const calendarId of Object.values(cal)) {
      const events = await client.callTool({
        name: 'list_events',
        arguments: { calendarId, timeMin: at('00:00'), timeMax: '2026-10-28T00:00:00Z' },
      });
      for (const event of (events.structuredContent as { events: { id: string; summary?: string }[] })
        .events) {
        ids[event.summary ?? '(hidden)'] = event.id;
      }
    }
    expect(ids).toHaveProperty('(hidden)');
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await gw?.stop();
    await emulator?.close();
  });

  it('check_availability reads Google free/busy: transparent and declined events do not block, all-day ones do', async () => {
    const check = async (from: string, to: string, day = DAY) =>
      inUtc(
        (
          await call('check_availability', {
            calendarIds: [cal.ann],
            timeMin: `${day}T${from}:00Z`,
            timeMax: `${day}T${to}:00Z`,
          })
        ).out,
      );
    expect(await check('09:30', '10:30')).toEqual({
      available: false,
      timeZone: 'Europe/Berlin',
      conflicts: [
        {
          start: at('09:30'),
          end: at('10:00'),
          calendarId: cal.ann,
          kind: 'event',
          eventId: ids.Planning,
          summary: 'Planning',
        },
      ],
    });
    expect(await check('11:00', '12:00')).toEqual({ available: true, timeZone: 'Europe/Berlin' });
    expect(await check('13:00', '14:00')).toEqual({ available: true, timeZone: 'Europe/Berlin' });
    expect(await check('10:00', '11:00', '2026-10-27')).toMatchObject({
      available: false,
      conflicts: [{ calendarId: cal.ann, kind: 'event', eventId: ids.Away, summary: 'Away' }],
    });
  });

  it('check_availability names what the key may read and says only "busy" for a private event it may not', async () => {
    const carol = inUtc(
      (
        await call('check_availability', {
          calendarIds: [cal.carol],
          timeMin: at('09:00'),
          timeMax: at('12:00'),
        })
      ).out,
    );
    expect(carol).toEqual({
      available: false,
      timeZone: 'Europe/Berlin',
      conflicts: [
        {
          start: at('09:00'),
          end: at('09:30'),
          calendarId: cal.carol,
          kind: 'event',
          eventId: ids['Carol 1:1'],
          summary: 'Carol 1:1',
        },
        { start: at('10:00'), end: at('11:00'), calendarId: cal.carol, kind: 'busy' },
      ],
    });
    const answer = await call('check_availability', {
      calendarIds: [cal.carol],
      timeMin: at('10:00'),
      timeMax: at('10:30'),
    });
    expect(answer.text).not.toContain('Therapy');
    expect(answer.text).not.toContain(ids['(hidden)']);
  });

  it('get_availability across two accounts: opaque and full', async () => {
    const window = { timeMin: at('08:00'), timeMax: at('12:00'), calendarIds: [cal.ann, cal.bob] };
    const full = await call('get_availability', { ...window, privacy: 'full' });
    const planning = { calendarId: cal.ann, kind: 'event', eventId: ids.Planning, summary: 'Planning' };
    const standup = { calendarId: cal.bob, kind: 'event', eventId: ids.Standup, summary: 'Standup' };
    // Calendars in two zones: the answer is in the key's (its default calendar is Ann's primary).
    expect(full.out.timeZone).toBe('Europe/Berlin');
    expect(full.text).toContain(`${DAY}T10:00:00+01:00`);
    expect(inUtc(full.out)).toEqual({
      timeZone: 'Europe/Berlin',
      busy: [
        { start: at('09:00'), end: at('09:30'), sourceCount: 1, events: [planning] },
        { start: at('09:30'), end: at('10:00'), sourceCount: 2, events: [planning, standup] },
        { start: at('10:00'), end: at('10:30'), sourceCount: 1, events: [standup] },
      ],
      free: [
        { start: at('08:00'), end: at('09:00'), durationMinutes: 60 },
        { start: at('10:30'), end: at('12:00'), durationMinutes: 90 },
      ],
      calendarsMerged: 2,
      privacy: 'full',
    });
    const opaque = await call('get_availability', window);
    // Opaque says neither which calendars nor which events.
    expect(inUtc(opaque.out.busy)).toEqual([{ start: at('09:00'), end: at('10:30'), sourceCount: 0 }]);
    const hidden = await call('get_availability', {
      timeMin: at('09:00'),
      timeMax: at('12:00'),
      calendarIds: [cal.carol],
      privacy: 'full',
    });
    expect(inUtc(hidden.out.busy)).toEqual([
      {
        start: at('09:00'),
        end: at('09:30'),
        sourceCount: 1,
        events: [{ calendarId: cal.carol, kind: 'event', eventId: ids['Carol 1:1'], summary: 'Carol 1:1' }],
      },
      {
        start: at('10:00'),
        end: at('11:00'),
        sourceCount: 1,
        events: [{ calendarId: cal.carol, kind: 'busy' }],
      },
    ]);
  });

  it('a calendar whose free/busy fails is reported and never treated as free', async () => {
    emulator.admin.script({
      match: { op: 'freebusy.query', account: BOB },
      times: 1,
      action: { kind: 'error', status: 403, reason: 'forbidden' },
    });
    const merged = await call('get_availability', {
      timeMin: at('08:00'),
      timeMax: at('12:00'),
      calendarIds: [cal.ann, cal.bob],
    });
    expect(merged.result.isError).toBeFalsy();
    expect(inUtc(merged.out)).toEqual({
      timeZone: 'Europe/Berlin',
      busy: [{ start: at('09:00'), end: at('10:00'), sourceCount: 0 }],
      free: [],
      calendarsMerged: 1,
      privacy: 'opaque',
      unavailableCalendars: [{ calendarId: cal.bob, code: 'permission_denied', message: expect.any(String) }],
    });
    emulator.admin.script({
      match: { op: 'freebusy.query', account: BOB },
      times: 1,
      action: { kind: 'error', status: 403, reason: 'forbidden' },
    });
    const slots = await call('find_free_slots', {
      calendarIds: [cal.bob],
      timeMin: at('08:00'),
      timeMax: at('12:00'),
    });
    expect(slots.result.isError).toBe(true);
    expect(slots.text).toMatch(new RegExp(`Free/busy of calendar '${cal.bob}' could not be read`));
    expect(slots.out).toBeUndefined();
  });
});
