export { CALENDAR_EVENT_FORMAT, calendarEventRow } from './format.ts';
export { type MirrorConnection, MirroredCalendarProvider, type MirrorReadDeps } from './provider.ts';
export type {
  CursorExpired,
  MirrorFormat,
  OpenedChannel,
  PushHooks,
  SyncBatch,
  SyncCalendar,
  SyncFailure,
  SyncSource,
  SyncStep,
  SyncWindow,
} from './source.ts';
export { type SyncMirrorOptions, type SyncResult, syncMirror } from './sync.ts';
export { Announcements, type MirrorVersionWatch, type ReadMark } from './trusted.ts';
