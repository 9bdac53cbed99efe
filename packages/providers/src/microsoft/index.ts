/**
 * Building blocks of the `microsoft` provider (Microsoft 365 and Outlook.com through Graph):
 * zones, times, recurrence, mapping, and the Graph client with its tokens and limits.
 */
export {
  DEFAULT_GRAPH_RETRY,
  GraphClient,
  type GraphClientOptions,
  type GraphPage,
  type GraphQuery,
  type GraphRequest,
  type GraphRetryPolicy,
  graphPath,
} from './client.ts';
export { type GraphFailureContext, permanentGraphError } from './failure.ts';
export type * from './graph-types.ts';
export {
  GRAPH_MAILBOX_BUDGET,
  GRAPH_MAX_IN_FLIGHT,
  type MailboxBudgetPolicy,
  MailboxBudgetSpent,
  type MailboxLimit,
  MailboxLimiter,
  type MailboxLimiterOptions,
  MailboxLimiters,
  type MailboxLimits,
} from './limiter.ts';
export {
  accountEmailOf,
  type GraphEventBody,
  type GraphEventFacts,
  type MicrosoftCalendarInfo,
  mailboxZoneOf,
  PREFER_TEXT_BODY,
  toCalendarEvent as fromGraphEvent,
  toCalendarInfo as fromGraphCalendar,
  toGraphEvent,
  type WriteContext as GraphWriteContext,
} from './mapping.ts';
export {
  type MicrosoftAccount,
  MicrosoftCalendarProvider,
  type MicrosoftProviderOptions,
} from './provider.ts';
export {
  type GraphDayOfWeek,
  type GraphPatternedRecurrence,
  type GraphRecurrencePattern,
  type GraphRecurrenceRange,
  OUTLOOK_CAN,
  type SeriesStart,
  toPatternedRecurrence,
  toRecurrenceLines,
} from './recurrence.ts';
export {
  MICROSOFT_MIRROR_FORMAT,
  MICROSOFT_PUSH_PATH,
  type MicrosoftSyncOptions,
  microsoftClientState,
  microsoftMirrorCovers,
  microsoftSyncSource,
} from './sync.ts';
export {
  type GraphDateTimeTimeZone,
  type GraphTime,
  graphRangeBound,
  preferTimeZone,
  readGraphTime,
  toEventDate as graphDateOf,
  toEventDateTime as graphDateTimeOf,
  toGraphTime,
} from './times.ts';
export {
  MICROSOFT_READ_SCOPES,
  MICROSOFT_WRITE_SCOPES,
  type MicrosoftClientConfig,
  MicrosoftTokenSource,
  microsoftTokenUrl,
} from './token.ts';
export { ianaZoneFor, windowsZoneFor, windowsZoneNames } from './zones.ts';
