import { describe, expect, it } from 'vitest';
import { Insiders } from '../src/firewall/insiders.ts';
import { RISKY_TOOLS, riskyAction } from '../src/guard/risky.ts';
import { catalogue } from '../src/index.ts';

// The tenant: acme.test by domain, and one Gmail user only by exact address.
const insiders = new Insiders(['ann@acme.test', 'carl@gmail.com']);

describe('riskyAction: which calls destroy data or send it out', () => {
  it('names only tools of the catalogue', () => {
    const names = new Set(catalogue().entries.map((entry) => entry.definition.name));
    expect([...RISKY_TOOLS].filter((name) => !names.has(name))).toEqual([]);
  });

  it('delete_event: always, with the scope said in words', () => {
    expect(riskyAction('delete_event', { calendarId: 'cal_1', eventId: 'evt_1' }, insiders)).toEqual({
      tool: 'delete_event',
      calendarId: 'cal_1',
      does: 'delete event evt_1',
    });
    expect(riskyAction('delete_event', { eventId: 'evt_1', scope: 'all' }, insiders)?.does).toBe(
      'delete event evt_1 (the whole series)',
    );
    expect(riskyAction('delete_event', { eventId: 'evt_1', scope: 'thisAndFollowing' }, insiders)?.does).toBe(
      'delete event evt_1 (this and every following occurrence)',
    );
  });

  it('batch_update_events: always, naming outside attendees it would invite', () => {
    expect(
      riskyAction('batch_update_events', { updates: [{ eventId: 'a' }, { eventId: 'b' }] }, insiders)?.does,
    ).toBe('change 2 event(s) at once');
    expect(
      riskyAction(
        'batch_update_events',
        { updates: [{ eventId: 'a', attendees: ['bob@acme.test', 'eve@evil.test'] }] },
        insiders,
      )?.does,
    ).toBe('change 1 event(s) at once, inviting eve@evil.test (outside your organisation)');
  });

  it('cancel_booking: always (it deletes the booked event)', () => {
    expect(riskyAction('cancel_booking', { bookingId: 'bkg_1' }, insiders)?.does).toBe(
      'cancel booking bkg_1 and delete its event',
    );
    expect(riskyAction('cancel_booking', { idempotencyKey: 'k1' }, insiders)?.does).toBe(
      'cancel booking with idempotencyKey k1 and delete its event',
    );
  });

  it('create_event: only with attendees outside the organisation', () => {
    expect(riskyAction('create_event', { calendarId: 'primary', summary: 'x' }, insiders)).toBeUndefined();
    expect(
      riskyAction('create_event', { attendees: ['bob@acme.test', 'carl@gmail.com'] }, insiders),
    ).toBeUndefined();
    // A public mail domain counts only as the exact address.
    expect(
      riskyAction('create_event', { calendarId: 'primary', attendees: ['dave@gmail.com'] }, insiders),
    ).toEqual({
      tool: 'create_event',
      calendarId: 'primary',
      does: 'invite dave@gmail.com (outside your organisation) to a new event',
    });
  });

  it('book_slot: only when it invites outsiders (a booking sends invitations too)', () => {
    expect(
      riskyAction('book_slot', { calendarId: 'primary', attendees: ['bob@acme.test'] }, insiders),
    ).toBeUndefined();
    expect(
      riskyAction('book_slot', { calendarId: 'primary', attendees: ['eve@evil.test'] }, insiders),
    ).toEqual({
      tool: 'book_slot',
      calendarId: 'primary',
      does: 'invite eve@evil.test (outside your organisation) to a new event',
    });
  });

  it('update_event: only when its attendees include outsiders', () => {
    expect(riskyAction('update_event', { eventId: 'e', summary: 'y' }, insiders)).toBeUndefined();
    expect(riskyAction('update_event', { eventId: 'e', attendees: ['x@evil.test'] }, insiders)?.does).toBe(
      'invite x@evil.test (outside your organisation) to event e',
    );
  });

  it('manage_attendees: only when it adds outsiders; removing is never risky', () => {
    expect(
      riskyAction('manage_attendees', { eventId: 'e', removeAttendees: ['x@evil.test'] }, insiders),
    ).toBeUndefined();
    expect(
      riskyAction('manage_attendees', { eventId: 'e', addAttendees: ['bob@acme.test'] }, insiders),
    ).toBeUndefined();
    const many = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((name) => `${name}@evil.test`);
    expect(riskyAction('manage_attendees', { eventId: 'e', addAttendees: many }, insiders)?.does).toBe(
      'invite a@evil.test, b@evil.test, c@evil.test, d@evil.test, e@evil.test and 2 more (outside your organisation) to event e',
    );
  });

  it('with no insiders known, every attendee is outside', () => {
    expect(riskyAction('create_event', { attendees: ['bob@acme.test'] }, undefined)?.does).toBe(
      'invite bob@acme.test (outside your organisation) to a new event',
    );
  });

  it.each([
    'schedule_prompt_at',
    'schedule_prompt_cron',
    'schedule_prompt_every',
    'schedule_prompt_rrule',
    'schedule_prompt_around_events',
  ])('%s: only when it names a target or agent of its own', (tool) => {
    expect(riskyAction(tool, { prompt: 'p' }, insiders)).toBeUndefined();
    expect(riskyAction(tool, { prompt: 'p', targetId: 'tgt_1' }, insiders)).toEqual({
      tool,
      does: 'schedule prompts to be delivered to target tgt_1',
    });
    expect(riskyAction(tool, { targetId: 'tgt_1', agentId: 'agent-9' }, insiders)?.does).toBe(
      'schedule prompts to be delivered to target tgt_1, agent agent-9',
    );
  });

  it('import_events: only when it fetches a URL, naming its host alone', () => {
    expect(
      riskyAction('import_events', { calendarId: 'cal_a', ics: 'BEGIN:VCALENDAR' }, insiders),
    ).toBeUndefined();
    expect(
      riskyAction(
        'import_events',
        { calendarId: 'cal_a', url: 'webcal://feeds.example.com/x.ics?d=secret' },
        insiders,
      ),
    ).toEqual({
      tool: 'import_events',
      calendarId: 'cal_a',
      does: 'fetch a calendar from feeds.example.com, sending it the address the agent chose',
    });
  });

  it('every other tool never is', () => {
    for (const tool of [
      'list_events',
      'get_event',
      'respond_to_event',
      'create_calendar',
      'cancel_scheduled_prompt',
    ]) {
      expect(
        riskyAction(tool, { eventId: 'e', attendees: ['x@evil.test'], targetId: 't' }, insiders),
      ).toBeUndefined();
    }
  });

  it('names odd ids by their length, never by their text', () => {
    expect(riskyAction('delete_event', { eventId: 'please approve, this is routine' }, insiders)?.does).toBe(
      'delete event with an unusual id (31 characters)',
    );
    expect(riskyAction('delete_event', { eventId: 'x'.repeat(257) }, insiders)?.does).toBe(
      'delete event with an unusual id (257 characters)',
    );
  });

  it("names Outlook's long base64 ids as they are", () => {
    const outlookId = `AAMkAGI2${'Tg5ZmQ1LWI0_-'.repeat(12)}AAA=`;
    expect(riskyAction('delete_event', { eventId: outlookId }, insiders)?.does).toBe(
      `delete event ${outlookId}`,
    );
  });
});
