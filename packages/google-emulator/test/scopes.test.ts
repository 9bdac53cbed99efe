import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GoogleEmulator } from '../src/index.ts';
import { ANN, CLIENT, oauthClient, startSeeded } from './helpers.ts';

const G = 'https://www.googleapis.com/auth/';
let emulator: GoogleEmulator;

beforeAll(async () => {
  emulator = await startSeeded();
});
afterAll(async () => {
  await emulator.close();
});

/** A Calendar API request over HTTP with a token holding exactly `scopes`. */
async function api(scopes: string[], method: string, path: string, body?: unknown): Promise<Response> {
  const { access_token } = emulator.admin.issueTokens({ email: ANN, scopes });
  return fetch(`${emulator.url}/calendar/v3${path}`, {
    method,
    headers: {
      authorization: `Bearer ${access_token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

const EVENT = {
  summary: 'x',
  start: { dateTime: '2027-01-01T10:00:00Z' },
  end: { dateTime: '2027-01-01T11:00:00Z' },
};
const FREEBUSY = { timeMin: '2027-01-01T00:00:00Z', timeMax: '2027-01-02T00:00:00Z', items: [{ id: ANN }] };
const events = `/calendars/${encodeURIComponent(ANN)}/events`;

describe('scope enforcement per method, as Google documents it', () => {
  it('answers 403 insufficientPermissions in Google’s shape when the token lacks the scope', async () => {
    const response = await api([`${G}calendar.readonly`], 'POST', events, EVENT);
    expect(response.status).toBe(403);
    expect(response.headers.get('www-authenticate')).toContain('insufficient_scope');
    expect(await response.json()).toEqual({
      error: {
        code: 403,
        message: 'Request had insufficient authentication scopes.',
        errors: [
          {
            domain: 'global',
            reason: 'insufficientPermissions',
            message: 'Request had insufficient authentication scopes.',
          },
        ],
        status: 'PERMISSION_DENIED',
      },
    });
  });

  const cases: [string, string[], string, string, unknown, number][] = [
    ['events.list with calendar.readonly', ['calendar.readonly'], 'GET', events, undefined, 200],
    [
      'events.list with calendar.events.readonly',
      ['calendar.events.readonly'],
      'GET',
      events,
      undefined,
      200,
    ],
    ['events.list with calendar.events', ['calendar.events'], 'GET', events, undefined, 200],
    ['events.list with email only', ['userinfo.email'], 'GET', events, undefined, 403],
    ['events.insert with calendar.events', ['calendar.events'], 'POST', events, EVENT, 200],
    ['events.insert with calendar', ['calendar'], 'POST', events, EVENT, 200],
    ['events.insert with calendar.events.readonly', ['calendar.events.readonly'], 'POST', events, EVENT, 403],
    [
      'calendarList.list with calendar.readonly',
      ['calendar.readonly'],
      'GET',
      '/users/me/calendarList',
      undefined,
      200,
    ],
    [
      'calendarList.list with calendar.events',
      ['calendar.events'],
      'GET',
      '/users/me/calendarList',
      undefined,
      403,
    ],
    [
      'freeBusy with calendar.events.freebusy',
      ['calendar.events.freebusy'],
      'POST',
      '/freeBusy',
      FREEBUSY,
      200,
    ],
    ['freeBusy with calendar.freebusy', ['calendar.freebusy'], 'POST', '/freeBusy', FREEBUSY, 200],
    ['freeBusy with calendar.readonly', ['calendar.readonly'], 'POST', '/freeBusy', FREEBUSY, 200],
    [
      'calendars.insert with calendar.readonly',
      ['calendar.readonly'],
      'POST',
      '/calendars',
      { summary: 'N' },
      403,
    ],
  ];
  it.each(cases)('%s', async (_name, scopes, method, path, body, status) => {
    const response = await api(
      scopes.map((s) => `${G}${s}`),
      method,
      path,
      body,
    );
    expect(response.status).toBe(status);
  });
});

describe('incremental authorization (include_granted_scopes)', () => {
  async function consentFor(
    scopes: string[],
    includeGranted: boolean,
  ): Promise<{ html: string; scope: string }> {
    const client = oauthClient(emulator);
    const authUrl = client.generateAuthUrl({
      access_type: 'offline',
      prompt: 'consent',
      scope: scopes,
      login_hint: ANN,
      include_granted_scopes: includeGranted,
    });
    const html = await (await fetch(authUrl)).text();
    const form = new URLSearchParams();
    for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
      form.set(m[1] as string, (m[2] as string).replace(/&amp;/g, '&'));
    }
    form.set('account', ANN);
    form.set('decision', 'approve');
    const back = await fetch(`${emulator.url}/o/oauth2/v2/auth/consent`, {
      method: 'POST',
      body: form,
      redirect: 'manual',
    });
    const code = new URL(back.headers.get('location') as string).searchParams.get('code') as string;
    const { tokens } = await client.getToken(code);
    return { html, scope: tokens.scope ?? '' };
  }

  it('merges what the account granted before, lists it in `scope`, and forgets it after revocation', async () => {
    const first = await consentFor([`${G}calendar.readonly`, 'email'], true);
    expect(first.scope.split(' ').sort()).toEqual([`${G}calendar.readonly`, `${G}userinfo.email`].sort());

    const upgrade = await consentFor([`${G}calendar.events`], true);
    // The consent page shows the one scope asked for and what was granted before.
    expect([...upgrade.html.matchAll(/data-scope="([^"]+)"/g)].map((m) => m[1])).toEqual([
      `${G}calendar.events`,
    ]);
    expect(upgrade.html).toContain('You already granted');
    expect(upgrade.scope.split(' ').sort()).toEqual(
      [`${G}calendar.readonly`, `${G}userinfo.email`, `${G}calendar.events`].sort(),
    );

    // Without include_granted_scopes the token covers only what this consent asked.
    const narrow = await consentFor([`${G}calendar.readonly`], false);
    expect(narrow.scope).toBe(`${G}calendar.readonly`);

    emulator.admin.revokeTokens({ email: ANN, clientId: CLIENT.clientId });
    const fresh = await consentFor([`${G}calendar.readonly`], true);
    expect(fresh.scope).toBe(`${G}calendar.readonly`);
  });
});
