import { describe, expect, it } from 'vitest';
import { ALICE, BOB, baseSeed, start } from './helpers.ts';

describe('/me and /me/mailboxSettings', () => {
  it('answers mail, userPrincipalName and displayName, and the zone as a Windows name', async () => {
    const { graph, emulator } = await start();
    const me = await graph('/me');
    expect(me.body).toMatchObject({ mail: ALICE, userPrincipalName: ALICE, displayName: 'Alice Example' });
    expect((await graph('/me/mailboxSettings')).body.timeZone).toBe('W. Europe Standard Time');
    const bob = emulator.admin.issueTokens({ email: BOB }).access_token;
    // Bob was seeded with an IANA zone: mailboxSettings names it the Windows way.
    expect((await graph('/me/mailboxSettings', { token: bob })).body.timeZone).toBe('Eastern Standard Time');
  });

  it('answers mail: null for an account without a mailbox address', async () => {
    const { emulator, graph } = await start({
      users: [
        {
          email: 'carol@fabrikam.example',
          userPrincipalName: 'carol_fabrikam.example#EXT#@contoso.example',
          hasMail: false,
        },
      ],
    });
    const token = emulator.admin.issueTokens({
      email: 'carol_fabrikam.example#EXT#@contoso.example',
    }).access_token;
    const me = await graph('/me', { token });
    expect(me.body.mail).toBeNull();
    expect(me.body.userPrincipalName).toBe('carol_fabrikam.example#EXT#@contoso.example');
  });
});

describe('URLs', () => {
  it('serves Graph under /v1.0 only: a path built as new URL("/me", graphUrl) is not Graph', async () => {
    const { emulator, token } = await start();
    const wrong = await fetch(new URL('/me', emulator.graphUrl), {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe('BadRequest');
    const right = await fetch(`${emulator.graphUrl}/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(right.status).toBe(200);
  });
});

describe('/me/calendars', () => {
  it('pages with an absolute @odata.nextLink that works as given, and pages may be shorter than $top', async () => {
    const seed = baseSeed();
    const alice = seed.users?.[0];
    for (let i = 0; i < 5; i += 1) {
      alice?.calendars?.push({ name: `Extra ${i}` });
    }
    const { graph } = await start(seed, { shortPages: true });
    const names: string[] = [];
    let url: string | undefined = '/me/calendars?$top=3';
    let pages = 0;
    while (url) {
      const res = await graph(url);
      expect(res.status).toBe(200);
      pages += 1;
      expect(res.body.value.length).toBeLessThanOrEqual(3);
      names.push(...res.body.value.map((c: { name: string }) => c.name));
      url = res.body['@odata.nextLink'];
      if (url) {
        expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\.0\/me\/calendars\?/);
      }
    }
    expect(pages).toBe(3);
    expect(names).toHaveLength(8);
    expect(new Set(names).size).toBe(8);
  });

  it('describes each calendar: canEdit, owner, name, color, hexColor, isDefaultCalendar', async () => {
    const { graph } = await start();
    const { value } = (await graph('/me/calendars')).body;
    expect(value.map((c: { name: string }) => c.name)).toEqual(['Calendar', 'Team', "Bob's calendar"]);
    expect(value[0]).toMatchObject({
      isDefaultCalendar: true,
      canEdit: true,
      owner: { address: ALICE, name: 'Alice Example' },
    });
    expect(value[1]).toMatchObject({ isDefaultCalendar: false, color: 'lightGreen', canEdit: true });
    expect(typeof value[1].hexColor).toBe('string');
    expect(value[2]).toMatchObject({ canEdit: false, owner: { address: BOB, name: 'Bob' } });
  });

  it('refuses writes to a calendar the mailbox cannot edit, and hides other mailboxes calendars', async () => {
    const { graph, calendarId, emulator } = await start();
    const res = await graph(`/me/calendars/${calendarId("Bob's calendar")}/events`, {
      method: 'POST',
      body: {
        subject: 'x',
        start: { dateTime: '2026-01-01T10:00:00', timeZone: 'UTC' },
        end: { dateTime: '2026-01-01T11:00:00', timeZone: 'UTC' },
      },
    });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('ErrorAccessDenied');
    const bobsOwn = (emulator.admin.calendars(BOB) as { id: string }[])[0]?.id;
    const hidden = await graph(`/me/calendars/${bobsOwn}`);
    expect(hidden.status).toBe(404);
    expect(hidden.body.error.code).toBe('ErrorItemNotFound');
  });
});
