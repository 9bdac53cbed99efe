/**
 * Seeding: users (mailboxes) with their calendars and events, OAuth clients, the tenant. Events
 * are given as Graph event bodies; a series may list `exceptions` (changes to one occurrence,
 * named by its original start as a local date-time in the series' zone), `deletedOccurrences`
 * and `cancelledOccurrences` (kept with isCancelled: true, as an attendee sees an occurrence the
 * organizer cancelled). An invitation from another organizer (`organizerAddress`) may carry the
 * mailbox's own answer (`responseStatus`), as the mailbox keeps it after responding; an exception
 * may answer one occurrence on its own.
 */
import { randomUUID } from 'node:crypto';
import { mailboxKey } from './identity.ts';
import { instanceById, occurrenceId, seriesZone } from './instances.ts';
import {
  type CalendarRecord,
  changeKey,
  type EventRecord,
  graphId,
  type MicrosoftState,
  type UserRecord,
} from './state.ts';
import { instantOf, parseLocal } from './time.ts';
import { applyInput, exceptionFrom, newEvent } from './write.ts';
import { acceptZone, windowsName } from './zones.ts';

export interface SeedEvent extends Record<string, unknown> {
  subject?: string;
  start: { dateTime: string; timeZone: string };
  end: { dateTime: string; timeZone: string };
  showAs?: string;
  sensitivity?: string;
  /** Organizer address (default: the calendar's owner). */
  organizerAddress?: string;
  /**
   * The mailbox's own answer to an invitation (default `notResponded`); only with another
   * `organizerAddress` (the organizer's own copy always answers `organizer`).
   */
  responseStatus?: { response: string; time?: string };
  isCancelled?: boolean;
  exceptions?: ({ originalStart: string } & Record<string, unknown>)[];
  deletedOccurrences?: string[];
  cancelledOccurrences?: string[];
}

export interface SeedCalendar {
  id?: string;
  name: string;
  color?: string;
  hexColor?: string;
  isDefaultCalendar?: boolean;
  canEdit?: boolean;
  /** Another mailbox's calendar shared with this one (default: the mailbox's own). */
  owner?: { name?: string; address: string };
  events?: SeedEvent[];
}

export interface SeedUser {
  /** The primary address (`mail`, and the default userPrincipalName). */
  email: string;
  displayName?: string;
  userPrincipalName?: string;
  /** Set false for an account whose `/me.mail` is null (clients fall back to userPrincipalName). */
  hasMail?: boolean;
  accountType?: 'work' | 'personal';
  /** Windows or IANA zone; answered as a Windows name by mailboxSettings (default UTC). */
  timeZone?: string;
  /**
   * Outlook's "Save declined events" (PreserveDeclinedMeetings): a declined invitation stays on
   * the calendar as free instead of being deleted (default false, as in Outlook).
   */
  preserveDeclinedMeetings?: boolean;
  /** Default: one default calendar named "Calendar". */
  calendars?: SeedCalendar[];
}

export interface SeedClient {
  clientId: string;
  clientSecret?: string;
  redirectUris?: string[];
}

export interface MicrosoftSeed {
  tenantId?: string;
  clients?: SeedClient[];
  users?: SeedUser[];
}

export const DEFAULT_CLIENT: SeedClient = {
  clientId: 'calgate-emulator-client',
  clientSecret: 'calgate-emulator-secret',
};

function windowsOf(zone: string | undefined): string {
  if (zone === undefined) {
    return 'UTC';
  }
  const accepted = acceptZone(zone);
  return accepted && accepted.name === zone && !zone.includes('/') ? zone : windowsName(zone);
}

export function addUser(state: MicrosoftState, seed: SeedUser): UserRecord {
  const user: UserRecord = {
    id: randomUUID(),
    mail: seed.hasMail === false ? null : seed.email,
    userPrincipalName: seed.userPrincipalName ?? seed.email,
    displayName: seed.displayName ?? seed.email.split('@')[0] ?? seed.email,
    accountType: seed.accountType ?? 'work',
    timeZone: windowsOf(seed.timeZone),
    preserveDeclinedMeetings: seed.preserveDeclinedMeetings === true,
  };
  state.users.set(mailboxKey(user), user);
  const calendars = seed.calendars ?? [{ name: 'Calendar', isDefaultCalendar: true }];
  calendars.forEach((c, i) => {
    addCalendar(state, mailboxKey(user), { ...c, isDefaultCalendar: c.isDefaultCalendar ?? i === 0 });
  });
  return user;
}

const COLORS = [
  'auto',
  'lightBlue',
  'lightGreen',
  'lightOrange',
  'lightGray',
  'lightYellow',
  'lightTeal',
  'lightPink',
];
const HEX = ['', '#0078d4', '#5bb04b', '#f7a74b', '#a0a0a0', '#f2d600', '#00b294', '#e3008c'];

export function addCalendar(state: MicrosoftState, mailbox: string, seed: SeedCalendar): CalendarRecord {
  const user = state.user(mailbox);
  const ownerAddress = seed.owner?.address ?? user?.mail ?? user?.userPrincipalName ?? mailbox;
  const index = state.calendarsOf(mailbox).length % COLORS.length;
  const calendar: CalendarRecord = {
    id: seed.id ?? graphId('AAMkAGC'),
    mailbox,
    name: seed.name,
    color: seed.color ?? (COLORS[index] as string),
    hexColor: seed.hexColor ?? (HEX[index] as string),
    isDefaultCalendar: seed.isDefaultCalendar ?? false,
    canEdit: seed.canEdit ?? seed.owner === undefined,
    owner: { name: seed.owner?.name ?? user?.displayName ?? ownerAddress, address: ownerAddress },
    changeKey: changeKey(),
    events: new Map(),
  };
  state.calendars.set(calendar.id, calendar);
  for (const event of seed.events ?? []) {
    addEvent(state, calendar, event);
  }
  return calendar;
}

/** The original start (epoch ms) a local date-time names in the series' zone. */
function originalStartOf(master: EventRecord, local: string): number {
  const parts = parseLocal(local);
  if (!parts) {
    throw new Error(`'${local}' is not a local date-time.`);
  }
  return instantOf(parts, master.isAllDay ? master.start.zone.iana : seriesZone(master).iana);
}

/** Responses a mailbox can hold for an invitation it did not organize. */
const ANSWERS = ['none', 'notResponded', 'accepted', 'tentativelyAccepted', 'declined'];

/** Sets the mailbox's own answer on an invitation (or one occurrence of it). */
function answer(state: MicrosoftState, event: EventRecord, given: unknown): void {
  const status = given as { response?: unknown; time?: unknown } | undefined;
  if (status === undefined) {
    return;
  }
  const response = String(status?.response);
  if (!ANSWERS.includes(response)) {
    throw new Error(`'${response}' is not a response an invitee holds (${ANSWERS.join(', ')}).`);
  }
  if (event.response === 'organizer') {
    throw new Error(`'${event.subject}' is the mailbox's own event: only an invitation has a response.`);
  }
  event.response = response;
  event.responseTime =
    typeof status.time === 'string'
      ? status.time
      : response === 'none' || response === 'notResponded'
        ? '0001-01-01T00:00:00Z'
        : new Date(state.now()).toISOString();
}

export function addEvent(state: MicrosoftState, calendar: CalendarRecord, seed: SeedEvent): EventRecord {
  const {
    organizerAddress,
    responseStatus,
    isCancelled,
    exceptions,
    deletedOccurrences,
    cancelledOccurrences,
    id,
    ...body
  } = seed;
  const event = newEvent(calendar, state.now());
  if (typeof id === 'string') {
    event.id = id;
  }
  applyInput(event, body, true);
  if (organizerAddress !== undefined) {
    const organizer = state.user(organizerAddress);
    event.organizer = { name: organizer?.displayName ?? organizerAddress, address: organizerAddress };
    event.response = 'notResponded';
  } else {
    event.response = 'organizer';
  }
  answer(state, event, responseStatus);
  event.isCancelled = isCancelled === true;
  if (event.kind === 'seriesMaster') {
    event.deleted = new Set();
  }
  calendar.events.set(event.id, event);
  const occurrence = (local: string) => {
    const t = originalStartOf(event, local);
    const found = instanceById(calendar, occurrenceId(event.id, t));
    if (!found) {
      throw new Error(`The series '${event.subject}' has no occurrence at ${local}.`);
    }
    return found;
  };
  for (const { originalStart, responseStatus: own, ...patch } of exceptions ?? []) {
    const exception = exceptionFrom(calendar, occurrence(originalStart), state.now());
    applyInput(exception, patch, false);
    answer(state, exception, own);
    calendar.events.set(exception.id, exception);
  }
  for (const local of cancelledOccurrences ?? []) {
    const exception = exceptionFrom(calendar, occurrence(local), state.now());
    exception.isCancelled = true;
    exception.subject = `Canceled: ${exception.subject}`;
    calendar.events.set(exception.id, exception);
  }
  for (const local of deletedOccurrences ?? []) {
    event.deleted?.add(occurrence(local).originalStart as number);
  }
  return event;
}

export function applySeed(state: MicrosoftState, seed: MicrosoftSeed): void {
  if (seed.tenantId !== undefined) {
    state.tenantId = seed.tenantId;
  }
  for (const client of [DEFAULT_CLIENT, ...(seed.clients ?? [])]) {
    state.clients.set(client.clientId, { ...client, redirectUris: client.redirectUris ?? [] });
  }
  for (const user of seed.users ?? []) {
    addUser(state, user);
  }
}
