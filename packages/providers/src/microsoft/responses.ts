/**
 * Answering an invitation on Outlook: a patch that changes only the account's own response (and
 * comment) goes through Graph's accept / decline / tentativelyAccept, never as an attendee edit;
 * an organizer's answer to their own meeting is refused unless it is "accepted".
 */
import { CalgateError, isCalgateError } from '@calgate/core';
import type { CalendarEvent, CalendarRef, EventAttendee, EventPatch, WriteOptions } from '../types.ts';
import { type GraphClient, graphPath } from './client.ts';

const RESPOND_PATH = {
  accepted: 'accept',
  declined: 'decline',
  tentative: 'tentativelyAccept',
} as const;

const emailKey = (email: string | undefined) => (email ?? '').trim().toLowerCase();

/**
 * A patch that changes only the account's own response (and comment) on its attendee entry is
 * an answer to the invitation: Graph takes it through accept / decline / tentativelyAccept.
 */
export function responseChange(
  account: string | undefined,
  before: readonly EventAttendee[],
  after: readonly EventAttendee[],
): { status: 'accepted' | 'declined' | 'tentative'; comment?: string } | undefined {
  const me = emailKey(account);
  if (me === '' || before.length !== after.length) {
    return undefined;
  }
  let change: { status: 'accepted' | 'declined' | 'tentative'; comment?: string } | undefined;
  for (const [i, next] of after.entries()) {
    const prior = before[i];
    if (prior === undefined || emailKey(prior.email) !== emailKey(next.email)) {
      return undefined;
    }
    const mine = emailKey(next.email) === me || next.self === true;
    const same =
      prior.responseStatus === next.responseStatus &&
      prior.comment === next.comment &&
      (prior.optional ?? false) === (next.optional ?? false);
    if (same) {
      continue;
    }
    if (!mine || next.responseStatus === undefined || next.responseStatus === 'needsAction') {
      return undefined;
    }
    change = {
      status: next.responseStatus,
      ...(next.comment === undefined ? {} : { comment: next.comment }),
    };
  }
  return change;
}

/** Sends the answer; `reread` reads the event back afterwards. */
export async function respond(
  client: GraphClient,
  calendar: CalendarRef,
  eventId: string,
  current: CalendarEvent,
  response: { status: 'accepted' | 'declined' | 'tentative'; comment?: string },
  options: WriteOptions,
  patch: EventPatch,
  reread: () => Promise<CalendarEvent>,
): Promise<CalendarEvent> {
  if (current.organizer?.self === true) {
    // Graph refuses an organizer's answer to their own meeting; Outlook counts them as attending.
    if (response.status === 'accepted') {
      return current;
    }
    throw new CalgateError(
      'invalid_argument',
      `The account organises event '${eventId}', and Outlook takes no answer from a meeting's organizer: it always counts them as attending. To call the meeting off, delete it with delete_event.`,
      { context: { eventId } },
    );
  }
  const action = RESPOND_PATH[response.status];
  await client.request<void>({
    method: 'POST',
    path: `${graphPath`/me/calendars/${calendar.externalId}/events/${eventId}`}/${action}`,
    body: {
      // Graph's own switch for telling the organizer: sendUpdates 'none' keeps the answer quiet.
      sendResponse: options.sendUpdates === undefined || options.sendUpdates === 'all',
      ...(response.comment === undefined ? {} : { comment: response.comment }),
    },
    operation: 'events.respond',
    calendarId: calendar.externalId,
    eventId,
  });
  try {
    return await reread();
  } catch (error) {
    // Outlook takes a declined meeting off the attendee's calendar (unless the mailbox saves
    // declined events): answer what was written, deleted, so that a mirror drops it too.
    if (isCalgateError(error) && error.code === 'not_found' && response.status === 'declined') {
      return {
        ...current,
        ...(patch.attendees === undefined ? {} : { attendees: patch.attendees }),
        status: 'cancelled',
      };
    }
    throw error;
  }
}
