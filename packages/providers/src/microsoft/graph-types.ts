/**
 * The Microsoft Graph v1.0 calendar resources Calgate reads and writes, as Graph sends them
 * (every field optional or nullable: Graph leaves out what `$select` did not ask for).
 */

import type { GraphPatternedRecurrence } from './recurrence.ts';
import type { GraphDateTimeTimeZone } from './times.ts';

export interface GraphEmailAddress {
  name?: string | null;
  address?: string | null;
}

export type GraphResponse =
  | 'none'
  | 'organizer'
  | 'tentativelyAccepted'
  | 'accepted'
  | 'declined'
  | 'notResponded';

export interface GraphAttendee {
  type?: 'required' | 'optional' | 'resource' | null;
  status?: { response?: GraphResponse | null; time?: string | null } | null;
  emailAddress?: GraphEmailAddress | null;
}

export interface GraphLocation {
  displayName?: string | null;
  locationType?: string | null;
  uniqueId?: string | null;
}

export type GraphShowAs = 'free' | 'tentative' | 'busy' | 'oof' | 'workingElsewhere' | 'unknown';
export type GraphSensitivity = 'normal' | 'personal' | 'private' | 'confidential';
export type GraphEventType = 'singleInstance' | 'occurrence' | 'exception' | 'seriesMaster';

export interface GraphEvent {
  id?: string;
  '@odata.etag'?: string;
  changeKey?: string | null;
  createdDateTime?: string | null;
  lastModifiedDateTime?: string | null;
  subject?: string | null;
  body?: { contentType?: 'text' | 'html' | null; content?: string | null } | null;
  bodyPreview?: string | null;
  start?: GraphDateTimeTimeZone | null;
  end?: GraphDateTimeTimeZone | null;
  originalStartTimeZone?: string | null;
  originalEndTimeZone?: string | null;
  /** An occurrence's or exception's start by the pattern (DateTimeOffset, UTC). */
  originalStart?: string | null;
  isAllDay?: boolean | null;
  isCancelled?: boolean | null;
  isOrganizer?: boolean | null;
  isReminderOn?: boolean | null;
  reminderMinutesBeforeStart?: number | null;
  showAs?: GraphShowAs | null;
  sensitivity?: GraphSensitivity | null;
  type?: GraphEventType | null;
  seriesMasterId?: string | null;
  recurrence?: GraphPatternedRecurrence | null;
  location?: GraphLocation | null;
  locations?: GraphLocation[] | null;
  attendees?: GraphAttendee[] | null;
  organizer?: { emailAddress?: GraphEmailAddress | null } | null;
  responseStatus?: { response?: GraphResponse | null; time?: string | null } | null;
  onlineMeeting?: { joinUrl?: string | null } | null;
  onlineMeetingUrl?: string | null;
  iCalUId?: string | null;
  /** Only when asked for with `$expand=singleValueExtendedProperties($filter=…)`. */
  singleValueExtendedProperties?: { id?: string | null; value?: string | null }[] | null;
  webLink?: string | null;
  transactionId?: string | null;
  /** On delta answers: the event is gone. */
  '@removed'?: { reason?: string } | null;
}

export type GraphCalendarColor =
  | 'auto'
  | 'lightBlue'
  | 'lightGreen'
  | 'lightOrange'
  | 'lightGray'
  | 'lightYellow'
  | 'lightTeal'
  | 'lightPink'
  | 'lightBrown'
  | 'lightRed'
  | 'maxColor';

export interface GraphCalendar {
  id?: string;
  name?: string | null;
  color?: GraphCalendarColor | null;
  hexColor?: string | null;
  isDefaultCalendar?: boolean | null;
  canEdit?: boolean | null;
  canShare?: boolean | null;
  canViewPrivateItems?: boolean | null;
  isRemovable?: boolean | null;
  changeKey?: string | null;
  owner?: GraphEmailAddress | null;
}

/** `/me` (the fields Calgate asks for). */
export interface GraphUser {
  id?: string;
  displayName?: string | null;
  mail?: string | null;
  userPrincipalName?: string | null;
}

/** `/me/mailboxSettings` (the zone is all Calgate reads). */
export interface GraphMailboxSettings {
  timeZone?: string | null;
}
