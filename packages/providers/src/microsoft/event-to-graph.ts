/**
 * Calgate's event (a create's `EventInput` or an update's `EventPatch`) as the body of a Graph
 * create or update: Graph's own properties, only those given, and a refusal for what Outlook
 * cannot store (colorId, statuses, several reminders, rules Outlook cannot repeat).
 */
import { CalgateError, err, ok, parseDateTimeFields, type Result } from '@calgate/core';
import type { EventDateTime, EventInput, EventPatch, Visibility } from '../types.ts';
import type { GraphSensitivity, GraphShowAs } from './graph-types.ts';
import { present } from './graph-values.ts';
import { type GraphPatternedRecurrence, type SeriesStart, toPatternedRecurrence } from './recurrence.ts';
import { type GraphDateTimeTimeZone, toGraphTime } from './times.ts';

const SENSITIVITY_OF: Record<Visibility, GraphSensitivity> = {
  default: 'normal',
  public: 'normal',
  private: 'private',
  confidential: 'confidential',
};

/** The body of a Graph create or update: Graph's own properties, only those the caller gave. */
export interface GraphEventBody {
  subject?: string;
  body?: { contentType: 'text'; content: string };
  location?: { displayName: string };
  start?: GraphDateTimeTimeZone;
  end?: GraphDateTimeTimeZone;
  isAllDay?: boolean;
  recurrence?: GraphPatternedRecurrence | null;
  attendees?: { emailAddress: { address: string; name?: string }; type: 'required' | 'optional' }[];
  isReminderOn?: boolean;
  reminderMinutesBeforeStart?: number;
  showAs?: GraphShowAs;
  sensitivity?: GraphSensitivity;
  /** Makes a create idempotent: Graph answers the first event again for a repeated id. */
  transactionId?: string;
}

export interface WriteContext {
  /** The calendar's zone (the mailbox's): local times and all-day dates are read in it. */
  calendarZone: string;
  /**
   * The event's current start, for a patch that sets `recurrence` without a new start (the
   * series' pattern is read from its start).
   */
  currentStart?: EventDateTime;
}

function refusal(message: string): Result<never, CalgateError> {
  return err(new CalgateError('invalid_argument', message));
}

function seriesStartOf(value: EventDateTime, calendarZone: string): Result<SeriesStart, CalgateError> {
  const time = toGraphTime(value, calendarZone);
  if (!time.ok) {
    return time;
  }
  const fields = parseDateTimeFields(time.value.value.dateTime, true);
  if (!fields.ok) {
    return fields;
  }
  return ok({ local: fields.value.local, timeZone: time.value.zone, allDay: time.value.allDay });
}

/**
 * The Graph body for a create (`EventInput`) or an update (`EventPatch`). A client-chosen id
 * becomes Graph's `transactionId` (Graph has no client ids); `colorId` and statuses other than
 * `confirmed` are refused (Outlook colours events by category, and cancels through its own call).
 */
export function toGraphEvent(
  input: EventInput | EventPatch,
  context: WriteContext,
): Result<GraphEventBody, CalgateError> {
  const body: GraphEventBody = {};
  if (input.colorId !== undefined) {
    return refusal(
      'Outlook calendars do not take colorId (Outlook colours events by category); leave colorId out.',
    );
  }
  if (input.status !== undefined && input.status !== 'confirmed') {
    return refusal(
      input.status === 'cancelled'
        ? "Outlook events are not cancelled by setting status; delete the event (Outlook tells its attendees) instead of setting status 'cancelled'."
        : `Outlook events have no status '${input.status}'; leave status out (or 'confirmed').`,
    );
  }
  if (input.summary !== undefined) {
    body.subject = input.summary;
  }
  if (input.description !== undefined) {
    body.body = { contentType: 'text', content: input.description };
  }
  if (input.location !== undefined) {
    body.location = { displayName: input.location };
  }
  const times = [input.start, input.end].filter(present);
  const kinds = new Set(times.map((time) => time.date !== undefined));
  if (kinds.size > 1) {
    return refusal(
      "start and end must both be dates (an all-day event) or both date-times; give 'date' for both or 'dateTime' for both.",
    );
  }
  for (const key of ['start', 'end'] as const) {
    const value = input[key];
    if (value === undefined) {
      continue;
    }
    const time = toGraphTime(value, context.calendarZone);
    if (!time.ok) {
      return time;
    }
    body[key] = time.value.value;
    body.isAllDay = time.value.allDay;
  }
  if (input.recurrence !== undefined) {
    if (input.recurrence.length === 0) {
      body.recurrence = null;
    } else {
      const from = input.start ?? context.currentStart;
      if (from === undefined) {
        return refusal('A recurrence needs the series start; give start with recurrence.');
      }
      const start = seriesStartOf(from, context.calendarZone);
      if (!start.ok) {
        return start;
      }
      const recurrence = toPatternedRecurrence(input.recurrence, start.value);
      if (!recurrence.ok) {
        return recurrence;
      }
      body.recurrence = recurrence.value;
    }
  }
  if (input.attendees !== undefined) {
    body.attendees = input.attendees.map((attendee) => ({
      emailAddress: {
        address: attendee.email,
        ...(attendee.displayName === undefined ? {} : { name: attendee.displayName }),
      },
      type: attendee.optional === true ? 'optional' : 'required',
    }));
  }
  if (input.reminders !== undefined) {
    const [first, ...rest] = input.reminders.overrides ?? [];
    if (rest.length > 0) {
      return refusal('Outlook keeps one reminder per event; give at most one reminder override.');
    }
    if (first !== undefined) {
      body.isReminderOn = true;
      body.reminderMinutesBeforeStart = first.minutes;
    } else if (!input.reminders.useDefault) {
      body.isReminderOn = false;
    }
  }
  if (input.transparency !== undefined) {
    body.showAs = input.transparency === 'transparent' ? 'free' : 'busy';
  }
  if (input.visibility !== undefined) {
    body.sensitivity = SENSITIVITY_OF[input.visibility];
  }
  if ('id' in input && input.id !== undefined) {
    body.transactionId = input.id;
  }
  return ok(body);
}
