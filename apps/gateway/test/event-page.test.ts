import { LocalCalendarProvider } from '@calgate/providers';
import { LocalEventStore } from '@calgate/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './harness.ts';

describe('GET /events/:calendarId/:eventId (the url search/fetch give for local events)', () => {
  let gw: TestGateway;
  let calendarId: string;
  let eventId: string;
  let cookie: string;
  let otherCookie: string;

  beforeAll(async () => {
    gw = await startTestGateway();
    const tenant = await gw.seedTenant('Acme');
    const other = await gw.seedTenant('Other');
    calendarId = await gw.localCalendar(tenant.tenantId, 'Team');
    const event = await new LocalCalendarProvider(new LocalEventStore(gw.db)).insertEvent(
      { id: calendarId, externalId: calendarId, timeZone: 'Europe/Berlin' },
      {
        summary: 'Review <script>alert(1)</script>',
        location: 'Room 4',
        start: { dateTime: '2026-12-01T09:00:00Z' },
        end: { dateTime: '2026-12-01T10:00:00Z' },
      },
    );
    eventId = event.id;
    await gw.db.pool.query(
      `INSERT INTO users (id, tenant_id, email) VALUES ('usr_a', $1, 'a@acme.test'), ('usr_o', $2, 'o@other.test')`,
      [tenant.tenantId, other.tenantId],
    );
    const sessions = gw.runtime.deps.dashboard.sessions;
    cookie = (await sessions.issue({ userId: 'usr_a', tenantId: tenant.tenantId })).split(';')[0] as string;
    otherCookie = (await sessions.issue({ userId: 'usr_o', tenantId: other.tenantId })).split(
      ';',
    )[0] as string;
  });
  afterAll(async () => {
    await gw.stop();
  });

  it('shows the event to a signed-in user of its tenant, with event text escaped', async () => {
    const response = await fetch(`${gw.url}/events/${calendarId}/${eventId}`, { headers: { cookie } });
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('Review &#60;script&#62;');
    expect(html).not.toContain('<script>');
    expect(html).toContain('Room 4');
  });

  it('asks to sign in without a session, and answers 404 to another tenant', async () => {
    expect((await fetch(`${gw.url}/events/${calendarId}/${eventId}`)).status).toBe(401);
    expect(
      (await fetch(`${gw.url}/events/${calendarId}/${eventId}`, { headers: { cookie: otherCookie } })).status,
    ).toBe(404);
    expect((await fetch(`${gw.url}/events/${calendarId}/nosuchevent0`, { headers: { cookie } })).status).toBe(
      404,
    );
  });
});
