/**
 * Secret iCalendar feed addresses: made and revoked through the dashboard's REST API (owners and
 * admins, audited), served at /feeds/<token>.ics with no other authentication, stopped at once by
 * revocation or by making a new address; the token is stored only as a hash.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, call, sessionFor } from './api-client.ts';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway } from './harness.ts';

describe('secret calendar feeds', () => {
  let gw: TestGateway;
  let owner: Browser;
  let tenantId = '';
  let calendar = '';
  let otherCalendar = '';

  beforeAll(async () => {
    gw = await startTestGateway(HIGH_RATE_LIMITS);
    const seeded = await gw.seedTenant('Feeds');
    tenantId = seeded.tenantId;
    calendar = await gw.localCalendar(tenantId, 'Team', 'Europe/Berlin');
    await gw.grant(tenantId, seeded.keyId, calendar, { read: true, write: true });
    const client = await connectClient(gw.mcpUrl, seeded.secret);
    const created = await client.callTool({
      name: 'create_event',
      arguments: {
        calendarId: calendar,
        summary: 'Planning',
        start: { dateTime: '2026-03-02T10:00:00', timeZone: 'Europe/Berlin' },
        end: { dateTime: '2026-03-02T11:00:00', timeZone: 'Europe/Berlin' },
        recurrence: ['RRULE:FREQ=WEEKLY;COUNT=3'],
      },
    });
    expect(created.isError, JSON.stringify(created.content)).toBeFalsy();
    await client.close();
    owner = await sessionFor(gw, tenantId);
    const other = await gw.seedTenant('Other');
    otherCalendar = await gw.localCalendar(other.tenantId, 'Private', 'Europe/Berlin');
  });

  afterAll(async () => {
    await gw?.stop();
  });

  it('a feed address serves the calendar as iCalendar without other authentication', async () => {
    const none = await call(gw, 'GET', `/api/v1/calendars/${calendar}/feed`, { as: owner });
    expect(none).toMatchObject({ status: 200, body: { feed: null } });
    const made = await call(gw, 'POST', `/api/v1/calendars/${calendar}/feed`, { as: owner });
    expect(made.status).toBe(200);
    const url = String(made.body.feed.url);
    expect(url).toMatch(/^http:\/\/calgate\.test\/feeds\/cgf_[A-Za-z0-9_-]{43}\.ics$/);
    const path = new URL(url).pathname;
    const served = await fetch(`${gw.url}${path}`);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toMatch(/^text\/calendar/);
    const text = await served.text();
    expect(text).toContain('X-WR-CALNAME:Team');
    expect(text).toContain('SUMMARY:Planning');
    expect(text).toContain('RRULE:FREQ=WEEKLY;COUNT=3');
    expect(text).toContain('DTSTART;TZID=Europe/Berlin:20260302T100000');
    const shown = await call(gw, 'GET', `/api/v1/calendars/${calendar}/feed`, { as: owner });
    expect(shown.body.feed).toMatchObject({ id: made.body.feed.id });
    expect(JSON.stringify(shown.body)).not.toContain(path.slice(7, -4));
    const stored = await gw.db.pool.query('SELECT token_hash FROM calendar_feeds');
    expect(JSON.stringify(stored.rows)).not.toContain(path.slice(7, -4));
  });

  it('revoking stops the address at once, and is audited', async () => {
    const made = await call(gw, 'POST', `/api/v1/calendars/${calendar}/feed`, { as: owner });
    const path = new URL(String(made.body.feed.url)).pathname;
    expect((await fetch(`${gw.url}${path}`)).status).toBe(200);
    const revoked = await call(gw, 'DELETE', `/api/v1/calendars/${calendar}/feed`, { as: owner });
    expect(revoked).toMatchObject({ status: 200, body: { revoked: true } });
    const gone = await fetch(`${gw.url}${path}`);
    expect(gone.status).toBe(404);
    expect(await gone.text()).toBe('No calendar feed at this address: it was never made, or it was revoked.');
    await gw.runtime.deps.audit.flush();
    const audit = await gw.db.pool.query<{ tool: string }>(
      "SELECT tool FROM audit_log WHERE tool LIKE 'calendar.feed%' ORDER BY id",
    );
    expect(audit.rows.map((row) => row.tool)).toEqual([
      'calendar.feed_create',
      'calendar.feed_create',
      'calendar.feed_revoke',
    ]);
  });

  it('a new address replaces the old one', async () => {
    const first = await call(gw, 'POST', `/api/v1/calendars/${calendar}/feed`, { as: owner });
    const second = await call(gw, 'POST', `/api/v1/calendars/${calendar}/feed`, { as: owner });
    expect((await fetch(`${gw.url}${new URL(String(first.body.feed.url)).pathname}`)).status).toBe(404);
    expect((await fetch(`${gw.url}${new URL(String(second.body.feed.url)).pathname}`)).status).toBe(200);
  });

  it("another workspace's calendar and guessed tokens are not found", async () => {
    const foreign = await call(gw, 'POST', `/api/v1/calendars/${otherCalendar}/feed`, { as: owner });
    expect(foreign.status).toBe(404);
    expect((await fetch(`${gw.url}/feeds/cgf_${'A'.repeat(43)}.ics`)).status).toBe(404);
    expect((await fetch(`${gw.url}/feeds/nonsense.ics`)).status).toBe(404);
  });
});
