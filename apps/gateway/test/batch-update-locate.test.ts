/**
 * batch_update_events finds each item's event as update_event does: among every calendar the key
 * can write when no calendarId is given (local and Google, default or not), in the one named
 * otherwise, and a not-found says where it looked.
 */
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectGoogleAccount, startTestEmulator, type TestEmulator } from './google-fixture.ts';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway, textOf } from './harness.ts';

const CLIENT = { clientId: 'calgate-batch.apps.googleusercontent.com', clientSecret: 'batch-secret' };
const ANN = 'ann@example.com';
const TEAM = 'team@group.calendar.google.com';

interface Item {
  index: number;
  eventId: string;
  ok: boolean;
  calendarId?: string;
  event?: { summary?: string };
  error?: { code: string; message: string };
}
interface BatchOut {
  succeeded: number;
  failed: number;
  results: Item[];
}

describe('batch_update_events finds events among the writable calendars, as update_event does', () => {
  let emulator: TestEmulator;
  let gw: TestGateway;
  let client: Client;
  /** Calgate ids of the calendars, by name. */
  const cal: Record<'ann' | 'team' | 'work' | 'home', string> = { ann: '', team: '', work: '', home: '' };
  /** An event on each calendar, by the calendar's name. */
  const ids: Record<'ann' | 'team' | 'work' | 'home', string> = { ann: '', team: '', work: '', home: '' };

  beforeAll(async () => {
    emulator = await startTestEmulator(CLIENT, {
      accounts: [{ email: ANN, timeZone: 'Europe/Berlin', calendars: [{ id: TEAM, summary: 'Team' }] }],
    });
    gw = await startTestGateway({ ...emulator.env, ...HIGH_RATE_LIMITS });
    const tenant = await gw.seedTenant('Acme');
    cal.ann = await connectGoogleAccount(gw, emulator, tenant, ANN, 'write');
    const { rows } = await gw.db.pool.query('SELECT id FROM calendars WHERE external_id = $1', [TEAM]);
    cal.team = rows[0].id as string;
    cal.work = await gw.localCalendar(tenant.tenantId, 'Work', 'Europe/Berlin');
    cal.home = await gw.localCalendar(tenant.tenantId, 'Home', 'Europe/Berlin');
    for (const calendarId of [cal.work, cal.home]) {
      await gw.grant(tenant.tenantId, tenant.keyId, calendarId, { read: true, write: true });
    }
    client = await connectClient(gw.mcpUrl, tenant.secret);
    let day = 1;
    for (const name of ['ann', 'team', 'work', 'home'] as const) {
      const created = await client.callTool({
        name: 'create_event',
        arguments: {
          calendarId: cal[name],
          summary: `On ${name}`,
          start: { dateTime: `2027-06-0${day}T09:00:00+02:00` },
          end: { dateTime: `2027-06-0${day}T10:00:00+02:00` },
        },
      });
      expect(created.isError, textOf(created)).toBeFalsy();
      ids[name] = (created.structuredContent as { eventId: string }).eventId;
      day++;
    }
  });

  afterAll(async () => {
    await client?.close();
    await gw?.stop();
    await emulator?.close();
  });

  async function batch(args: Record<string, unknown>): Promise<BatchOut> {
    const result = await client.callTool({ name: 'batch_update_events', arguments: args });
    expect(result.isError, textOf(result)).toBeFalsy();
    return result.structuredContent as BatchOut;
  }

  async function summaryOf(calendarId: string, eventId: string): Promise<string | undefined> {
    const read = await client.callTool({ name: 'get_event', arguments: { calendarId, eventId } });
    expect(read.isError, textOf(read)).toBeFalsy();
    return (read.structuredContent as { event: { summary?: string } }).event.summary;
  }

  it('without calendarId updates events on default and other calendars, local and Google', async () => {
    const out = await batch({
      updates: (['home', 'team', 'ann', 'work'] as const).map((name) => ({
        eventId: ids[name],
        summary: `Moved ${name}`,
      })),
    });
    expect(out.results.map((item) => [item.ok, item.calendarId, item.event?.summary])).toEqual(
      (['home', 'team', 'ann', 'work'] as const).map((name) => [true, cal[name], `Moved ${name}`]),
    );
    expect(out).toMatchObject({ succeeded: 4, failed: 0 });
    for (const name of ['home', 'team', 'ann', 'work'] as const) {
      expect(await summaryOf(cal[name], ids[name])).toBe(`Moved ${name}`);
    }
  });

  it('a missing id fails alone and names every calendar searched', async () => {
    const out = await batch({
      updates: [
        { eventId: 'missingevent42', colorId: '3' },
        { eventId: ids.team, colorId: '3' },
      ],
    });
    expect(out).toMatchObject({ succeeded: 1, failed: 1 });
    const [missing] = out.results;
    expect(missing?.error?.code).toBe('not_found');
    expect(missing?.error?.message).toMatch(
      /^Event 'missingevent42' was not found in any calendar this key can write: searched /,
    );
    for (const name of ['ann', 'team', 'work', 'home'] as const) {
      expect(missing?.error?.message).toContain(cal[name]);
    }
    expect(missing?.error?.message).not.toMatch(/not found on Google Calendar\.?$/);
  });

  it('the batch calendarId is each item’s default; a not-found names that calendar', async () => {
    const out = await batch({
      calendarId: cal.home,
      updates: [
        { eventId: ids.home, location: 'Kitchen' },
        { eventId: ids.work, location: 'Kitchen' },
        { eventId: ids.team, calendarId: TEAM, location: 'Room 2' },
      ],
    });
    expect(out.results.map((item) => item.ok)).toEqual([true, false, true]);
    expect(out.results[1]?.error?.code).toBe('not_found');
    expect(out.results[1]?.error?.message).toContain(`calendar 'Home' (${cal.home})`);
    expect(out.results[1]?.error?.message).toMatch(/Leave calendarId out to search every writable calendar/);
    expect(out.results[2]?.calendarId).toBe(cal.team);
  });
});
