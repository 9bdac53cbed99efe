import { describe, expect, it } from 'vitest';
import { start } from './helpers.ts';

const when = (dateTime: string, timeZone = 'W. Europe Standard Time') => ({ dateTime, timeZone });
const LOCAL_7 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{7}$/;

describe('event writes and reads', () => {
  it('creates, reads, updates and deletes an event, answering wall-clock times in the preferred zone', async () => {
    const { graph, calendarId } = await start();
    const cal = calendarId('Calendar');
    const created = await graph(`/me/calendars/${cal}/events`, {
      method: 'POST',
      body: {
        subject: 'Planning',
        body: { contentType: 'text', content: 'Agenda: <budget> & dates' },
        start: when('2026-07-01T10:00:00'),
        end: when('2026-07-01T11:30:00'),
        location: { displayName: 'Room 1' },
        attendees: [{ emailAddress: { address: 'dana@example.org', name: 'Dana' }, type: 'required' }],
        showAs: 'tentative',
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(id.length).toBeGreaterThan(100);
    expect(created.body).toMatchObject({
      type: 'singleInstance',
      subject: 'Planning',
      originalStartTimeZone: 'W. Europe Standard Time',
    });
    // No Prefer header: UTC, 7 fractional digits, no offset.
    expect(created.body.start).toEqual({ dateTime: '2026-07-01T08:00:00.0000000', timeZone: 'UTC' });
    expect(created.body.body.contentType).toBe('html');
    expect(created.body.body.content).toContain('Agenda: &lt;budget&gt; &amp; dates');
    expect(created.body['@odata.etag']).toBe(`W/"${created.body.changeKey}"`);
    expect(created.body.attendees[0].status.response).toBe('none');
    expect(created.body.responseStatus.response).toBe('organizer');

    const read = await graph(`/me/events/${id}`, {
      headers: { prefer: 'outlook.timezone="Pacific Standard Time", outlook.body-content-type="text"' },
    });
    expect(read.body.start).toEqual({
      dateTime: '2026-07-01T01:00:00.0000000',
      timeZone: 'Pacific Standard Time',
    });
    expect(read.body.end.dateTime).toMatch(LOCAL_7);
    expect(read.body.body).toEqual({ contentType: 'text', content: 'Agenda: <budget> & dates' });
    expect(read.headers.get('preference-applied')).toContain('outlook.timezone="Pacific Standard Time"');

    const iana = await graph(`/me/calendars/${cal}/events/${id}`, {
      headers: { prefer: 'outlook.timezone="Asia/Tokyo"' },
    });
    expect(iana.body.start).toEqual({ dateTime: '2026-07-01T17:00:00.0000000', timeZone: 'Asia/Tokyo' });

    const patched = await graph(`/me/events/${id}`, {
      method: 'PATCH',
      body: {
        subject: 'Planning (moved)',
        start: when('2026-07-01T14:00:00', 'UTC'),
        end: when('2026-07-01T15:00:00', 'UTC'),
      },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.subject).toBe('Planning (moved)');
    expect(patched.body.changeKey).not.toBe(created.body.changeKey);
    expect(patched.body.originalStartTimeZone).toBe('UTC');

    // Ids are case-sensitive: the same letters in another case name nothing.
    const swapped = id.replace(/[a-z]/g, (c) => c.toUpperCase());
    expect((await graph(`/me/events/${encodeURIComponent(swapped)}`)).status).toBe(404);
    expect((await graph(`/me/events/${encodeURIComponent(id)}`)).status).toBe(200);
    expect((await graph(`/me/events/${id}`, { method: 'DELETE' })).status).toBe(204);
    const gone = await graph(`/me/events/${id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('ErrorItemNotFound');
  });

  it('refuses IANA zones Graph does not take, in bodies and in the Prefer header, with Graph error shape', async () => {
    const { graph, calendarId } = await start();
    const res = await graph(`/me/calendars/${calendarId('Calendar')}/events`, {
      method: 'POST',
      body: {
        subject: 'x',
        start: when('2026-07-01T10:00:00', 'Europe/Amsterdam'),
        end: when('2026-07-01T11:00:00', 'Europe/Amsterdam'),
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('TimeZoneNotSupportedException');
    expect(res.body.error.message).toContain("'Europe/Amsterdam'");
    const view = await graph(
      `/me/calendarView?startDateTime=2026-07-01T00:00:00Z&endDateTime=2026-07-02T00:00:00Z`,
      { headers: { prefer: 'outlook.timezone="Europe/Amsterdam"' } },
    );
    expect(view.status).toBe(400);
    expect(view.body.error.code).toBe('TimeZoneNotSupportedException');
    // Europe/Berlin is on Graph's list, as is every Windows name.
    const berlin = await graph(`/me/calendars/${calendarId('Calendar')}/events`, {
      method: 'POST',
      body: {
        subject: 'y',
        start: when('2026-07-01T10:00:00', 'Europe/Berlin'),
        end: when('2026-07-01T11:00:00', 'Europe/Berlin'),
      },
    });
    expect(berlin.status).toBe(201);
    expect(berlin.body.start.dateTime).toBe('2026-07-01T08:00:00.0000000');
  });

  it('makes a create with the same transactionId once', async () => {
    const { graph, calendarId, emulator } = await start();
    const cal = calendarId('Team');
    const body = {
      subject: 'Once',
      transactionId: 'txn-42',
      start: when('2026-07-02T09:00:00'),
      end: when('2026-07-02T10:00:00'),
    };
    const a = await graph(`/me/calendars/${cal}/events`, { method: 'POST', body });
    const b = await graph(`/me/calendars/${cal}/events`, { method: 'POST', body });
    expect(a.status).toBe(201);
    expect(b.body.id).toBe(a.body.id);
    expect(b.body.transactionId).toBe('txn-42');
    expect(emulator.admin.events(cal)).toHaveLength(1);
  });

  it('checks If-Match against the etag or change key: a stale one is 412 and changes nothing', async () => {
    const { graph, calendarId } = await start();
    const created = await graph(`/me/calendars/${calendarId('Calendar')}/events`, {
      method: 'POST',
      body: { subject: 'v1', start: when('2026-07-03T09:00:00'), end: when('2026-07-03T10:00:00') },
    });
    const id = created.body.id;
    const v2 = await graph(`/me/events/${id}`, {
      method: 'PATCH',
      headers: { 'if-match': created.body['@odata.etag'] },
      body: { subject: 'v2' },
    });
    expect(v2.status).toBe(200);
    const stale = await graph(`/me/events/${id}`, {
      method: 'PATCH',
      headers: { 'if-match': created.body['@odata.etag'] },
      body: { subject: 'v3' },
    });
    expect(stale.status).toBe(412);
    expect(stale.body.error.code).toBe('ErrorIrresolvableConflict');
    expect((await graph(`/me/events/${id}`)).body.subject).toBe('v2');
    const staleDelete = await graph(`/me/events/${id}`, {
      method: 'DELETE',
      headers: { 'if-match': created.body.changeKey },
    });
    expect(staleDelete.status).toBe(412);
    expect(
      (await graph(`/me/events/${id}`, { method: 'DELETE', headers: { 'if-match': v2.body.changeKey } }))
        .status,
    ).toBe(204);
  });

  it('keeps all-day events midnight to midnight in their own zone, whatever zone is preferred', async () => {
    const { graph, calendarId } = await start();
    const created = await graph(`/me/calendars/${calendarId('Calendar')}/events`, {
      method: 'POST',
      headers: { prefer: 'outlook.timezone="Tokyo Standard Time"' },
      body: {
        subject: 'Holiday',
        isAllDay: true,
        start: when('2026-12-24T00:00:00'),
        end: when('2026-12-26T00:00:00'),
      },
    });
    expect(created.body.isAllDay).toBe(true);
    expect(created.body.start).toEqual({
      dateTime: '2026-12-24T00:00:00.0000000',
      timeZone: 'W. Europe Standard Time',
    });
    expect(created.body.end.dateTime).toBe('2026-12-26T00:00:00.0000000');
    const notMidnight = await graph(`/me/calendars/${calendarId('Calendar')}/events`, {
      method: 'POST',
      body: {
        subject: 'Bad',
        isAllDay: true,
        start: when('2026-12-24T09:00:00'),
        end: when('2026-12-25T09:00:00'),
      },
    });
    expect(notMidnight.status).toBe(400);
    expect(notMidnight.body.error.message).toMatch(/midnight/);
  });

  it('refuses properties Graph does not have and applies $select', async () => {
    const { graph, calendarId } = await start();
    const cal = calendarId('Calendar');
    const googleish = await graph(`/me/calendars/${cal}/events`, {
      method: 'POST',
      body: { summary: 'x', start: when('2026-07-01T10:00:00'), end: when('2026-07-01T11:00:00') },
    });
    expect(googleish.status).toBe(400);
    expect(googleish.body.error.message).toContain("'summary'");
    const ok = await graph(`/me/calendars/${cal}/events`, {
      method: 'POST',
      body: { subject: 'Sel', start: when('2026-07-01T10:00:00'), end: when('2026-07-01T11:00:00') },
    });
    const selected = await graph(`/me/events/${ok.body.id}?$select=subject,start`);
    expect(
      Object.keys(selected.body)
        .filter((k) => !k.startsWith('@odata.context'))
        .sort(),
    ).toEqual(['@odata.etag', 'id', 'start', 'subject']);
    expect((await graph(`/me/events/${ok.body.id}?$select=summary`)).status).toBe(400);
  });

  it('takes meeting responses from attendees and cancellations from organizers', async () => {
    const { graph, calendarId, emulator } = await start();
    const cal = calendarId('Calendar');
    const { id } = emulator.admin.addEvent(cal, {
      subject: 'Their meeting',
      organizerAddress: 'zed@example.org',
      start: when('2026-07-05T09:00:00'),
      end: when('2026-07-05T10:00:00'),
    });
    expect((await graph(`/me/events/${id}`)).body.responseStatus.response).toBe('notResponded');
    expect(
      (await graph(`/me/events/${id}/tentativelyAccept`, { method: 'POST', body: { sendResponse: true } }))
        .status,
    ).toBe(202);
    expect((await graph(`/me/events/${id}`)).body.responseStatus.response).toBe('tentativelyAccepted');
    expect((await graph(`/me/events/${id}/cancel`, { method: 'POST', body: {} })).status).toBe(400);
    const mine = await graph(`/me/calendars/${cal}/events`, {
      method: 'POST',
      body: { subject: 'Mine', start: when('2026-07-05T11:00:00'), end: when('2026-07-05T12:00:00') },
    });
    expect((await graph(`/me/events/${mine.body.id}/accept`, { method: 'POST', body: {} })).status).toBe(400);
    expect(
      (await graph(`/me/events/${mine.body.id}/cancel`, { method: 'POST', body: { comment: 'off' } })).status,
    ).toBe(202);
    expect((await graph(`/me/events/${mine.body.id}`)).status).toBe(404);
  });
});
