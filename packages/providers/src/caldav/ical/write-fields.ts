/**
 * A VEVENT's fields as a patch sets them: texts, attendees (keeping their parameters), VALARM
 * reminders, recurrence lines, transparency, class and status, and DTSTAMP/LAST-MODIFIED.
 */
import ICAL from 'ical.js';
import type { EventAttendee, EventInput, EventPatch } from '../../types.ts';
import { invalid } from './write-times.ts';

const PARTSTAT: Record<NonNullable<EventAttendee['responseStatus']>, string> = {
  accepted: 'ACCEPTED',
  declined: 'DECLINED',
  tentative: 'TENTATIVE',
  needsAction: 'NEEDS-ACTION',
};

function setText(component: ICAL.Component, name: string, value: string | undefined): void {
  if (value === undefined) {
    return;
  }
  if (value === '') {
    component.removeAllProperties(name);
  } else {
    component.updatePropertyWithValue(name, value);
  }
}

/** Attendees as asked, each keeping the parameters it already had (RSVP, X-…, ROLE). */
function setAttendees(component: ICAL.Component, attendees: EventAttendee[]): void {
  const existing = new Map<string, ICAL.Property>();
  for (const property of component.getAllProperties('attendee')) {
    const value = property.getFirstValue();
    if (typeof value === 'string') {
      existing.set(value.replace(/^mailto:/i, '').toLowerCase(), property);
    }
  }
  component.removeAllProperties('attendee');
  for (const attendee of attendees) {
    const property = existing.get(attendee.email.toLowerCase()) ?? new ICAL.Property('attendee');
    if (!existing.has(attendee.email.toLowerCase())) {
      property.setValue(`mailto:${attendee.email}`);
      property.setParameter('partstat', 'NEEDS-ACTION');
      property.setParameter('role', 'REQ-PARTICIPANT');
    }
    if (attendee.displayName !== undefined) {
      property.setParameter('cn', attendee.displayName);
    }
    if (attendee.optional !== undefined) {
      property.setParameter('role', attendee.optional ? 'OPT-PARTICIPANT' : 'REQ-PARTICIPANT');
    }
    if (attendee.responseStatus !== undefined) {
      property.setParameter('partstat', PARTSTAT[attendee.responseStatus]);
    }
    component.addProperty(property);
  }
}

function setReminders(component: ICAL.Component, reminders: NonNullable<EventInput['reminders']>): void {
  for (const alarm of component.getAllSubcomponents('valarm')) {
    component.removeSubcomponent(alarm);
  }
  for (const override of reminders.useDefault ? [] : (reminders.overrides ?? [])) {
    const alarm = new ICAL.Component('valarm');
    alarm.addPropertyWithValue('action', override.method === 'email' ? 'EMAIL' : 'DISPLAY');
    const trigger = new ICAL.Property('trigger');
    trigger.setValue(ICAL.Duration.fromSeconds(-override.minutes * 60));
    alarm.addProperty(trigger);
    alarm.addPropertyWithValue('description', component.getFirstPropertyValue('summary') ?? 'Reminder');
    component.addSubcomponent(alarm);
  }
}

export function setRecurrence(component: ICAL.Component, lines: string[]): void {
  for (const name of ['rrule', 'exrule', 'rdate', 'exdate']) {
    component.removeAllProperties(name);
  }
  if (lines.length === 0) {
    return;
  }
  let holder: ICAL.Component;
  try {
    holder = ICAL.Component.fromString(`BEGIN:VEVENT\r\n${lines.join('\r\n')}\r\nEND:VEVENT`);
  } catch {
    throw invalid(
      `recurrence lines ${JSON.stringify(lines)} are not iCalendar; write e.g. 'RRULE:FREQ=WEEKLY;COUNT=5'.`,
    );
  }
  // A copy: adding a property to the event takes it out of the holder's list.
  for (const property of [...holder.getAllProperties()]) {
    if (!['rrule', 'exrule', 'rdate', 'exdate'].includes(property.name)) {
      throw invalid(`recurrence line '${property.toICALString()}' is not RRULE, EXRULE, RDATE or EXDATE.`);
    }
    component.addProperty(property);
  }
}

export function stamp(component: ICAL.Component, now: number): void {
  const at = ICAL.Time.fromJSDate(new Date(Math.floor(now / 1000) * 1000), true);
  component.updatePropertyWithValue('dtstamp', at);
  component.updatePropertyWithValue('last-modified', at);
}

/** Applies a patch's fields to a VEVENT; times are handled by the caller. */
export function applyFields(component: ICAL.Component, patch: EventPatch): void {
  setText(component, 'summary', patch.summary);
  setText(component, 'description', patch.description);
  setText(component, 'location', patch.location);
  if (patch.attendees !== undefined) {
    setAttendees(component, patch.attendees);
  }
  if (patch.reminders !== undefined) {
    setReminders(component, patch.reminders);
  }
  if (patch.transparency !== undefined) {
    component.updatePropertyWithValue(
      'transp',
      patch.transparency === 'transparent' ? 'TRANSPARENT' : 'OPAQUE',
    );
  }
  if (patch.visibility !== undefined) {
    if (patch.visibility === 'default') {
      component.removeAllProperties('class');
    } else {
      component.updatePropertyWithValue('class', patch.visibility.toUpperCase());
    }
  }
  if (patch.status !== undefined) {
    component.updatePropertyWithValue('status', patch.status.toUpperCase());
  }
}
