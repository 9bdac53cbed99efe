import { randomBytes } from 'node:crypto';
import { type GoogleEmulator, startGoogleEmulator } from '@calgate/google-emulator';
import { GOOGLE_SCOPES } from '@calgate/providers';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli.ts';
import { connectClient, startTestGateway, type TestGateway, textOf } from './harness.ts';

const CLIENT = { clientId: 'availability.apps.googleusercontent.com', clientSecret: 'availability-secret' };
const ANN = 'ann@example.com';
const BOB = 'bob@example.com';
const DAY = '2026-10-26';
const at = (time: string) => `${DAY}T${time}:00Z`;
const timed = (summary: string, from: string, to: string, extra: Record<string, unknown> = {}) => ({
  summary,
  start: { dateTime: at(from) },
  end: { dateTime: at(to) },
  ...extra,
});

describe('availability tools on Google calendars (emulator), over HTTP with the MCP SDK client', () => {
  let emulator: GoogleEmulator;
  let gw: TestGateway;
  let client: Client;
  const cal: Record<string, string> = {};

  const call = async (name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args });
    return { result, text: textOf(result), out: result.structuredContent as Record<string, unknown> };
  };

  beforeAll(async () => {
    emulator = await startGoogleEmulator({
      seed: {
        oauthClients: [{ ...CLIENT, redirectUris: ['http://calgate.test/oauth/google/callback'] }],
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
        ],
      },
    });
    const env = {
      GOOGLE_CLIENT_ID: CLIENT.clientId,
      GOOGLE_CLIENT_SECRET: CLIENT.clientSecret,
      GOOGLE_API_ROOT_URL: `${emulator.url}/`,
      GOOGLE_OAUTH_URL: emulator.url,
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    };
    gw = await startTestGateway(env);
    const tenant = await gw.seedTenant('Acme');
    for (const email of [ANN, BOB]) {
      const tokens = emulator.admin.issueTokens({
        email,
        offline: true,
        clientId: CLIENT.clientId,
        scopes: [...GOOGLE_SCOPES],
      });
      const code = await main(
        ['connect', 'google', '--refresh-token', tokens.refresh_token as string, '--access', 'read'],
        { ...env, DATABASE_URL: gw.db.url },
        { out: () => {}, err: () => {} },
      );
      expect(code).toBe(0);
    }
    gw.runtime.deps.authenticator.invalidate();
    client = await connectClient(gw.mcpUrl, tenant.secret);
    const listed = await client.callTool({ name: 'list_calendars', arguments: {} });
    for (const c of (listed.structuredContent as { calendars: { id: string; accountEmail: string }[] })
      .calendars) {
      cal[c.accountEmail === ANN ? 'ann' : 'bob'] = c.id;
    }
    expect(Object.keys(cal).sort()).toEqual(['ann', 'bob']);
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await gw?.stop();
    await emulator?.close();
  });

  it('check_availability reads Google free/busy: transparent and declined events do not block, all-day ones do', async () => {
    const check = async (from: string, to: string, day = DAY) =>
      (
        await call('check_availability', {
          calendarId: cal.ann,
          start: `${day}T${from}:00Z`,
          end: `${day}T${to}:00Z`,
        })
      ).out;
    expect(await check('09:30', '10:30')).toEqual({
      available: false,
      conflicts: [{ start: at('09:30'), end: at('10:00'), kind: 'event' }],
    });
    expect(await check('11:00', '12:00')).toEqual({ available: true });
    expect(await check('13:00', '14:00')).toEqual({ available: true });
    expect(await check('10:00', '11:00', '2026-10-27')).toMatchObject({ available: false });
  });

  it('get_availability across two accounts: opaque and full', async () => {
    const window = { start: at('08:00'), end: at('12:00'), calendarIds: [cal.ann, cal.bob] };
    const full = await call('get_availability', { ...window, privacy: 'full' });
    expect(full.out).toEqual({
      busy: [
        { start: at('09:00'), end: at('09:30'), sourceCount: 1 },
        { start: at('09:30'), end: at('10:00'), sourceCount: 2 },
        { start: at('10:00'), end: at('10:30'), sourceCount: 1 },
      ],
      free: [
        { start: at('08:00'), end: at('09:00'), durationMinutes: 60 },
        { start: at('10:30'), end: at('12:00'), durationMinutes: 90 },
      ],
      calendarsMerged: 2,
      privacy: 'full',
    });
    const opaque = await call('get_availability', window);
    expect(opaque.out.busy).toEqual([{ start: at('09:00'), end: at('10:30'), sourceCount: 0 }]);
  });

  it('a calendar whose free/busy fails is reported and never treated as free', async () => {
    emulator.admin.script({
      match: { op: 'freebusy.query', account: BOB },
      times: 1,
      action: { kind: 'error', status: 403, reason: 'forbidden' },
    });
    const merged = await call('get_availability', {
      start: at('08:00'),
      end: at('12:00'),
      calendarIds: [cal.ann, cal.bob],
    });
    expect(merged.result.isError).toBeFalsy();
    expect(merged.out).toEqual({
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
      calendarId: cal.bob,
      start: at('08:00'),
      end: at('12:00'),
    });
    expect(slots.result.isError).toBe(true);
    expect(slots.text).toMatch(new RegExp(`Free/busy of calendar '${cal.bob}' could not be read`));
    expect(slots.out).toBeUndefined();
  });
});
