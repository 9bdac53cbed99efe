/** The event mirror: Google calendars' events kept in Postgres by incremental sync. */

export {
  MirrorChannelRepository,
  type MirrorChannelRow,
  type NewMirrorChannel,
  type NotificationOutcome,
} from './channels.ts';
export { MirrorRepository } from './repository.ts';
export { SEARCH_TEXT_MAX } from './search.ts';
export type {
  MirrorChange,
  MirrorEventInput,
  MirrorEventRow,
  MirrorRangeQuery,
  MirrorSearchHit,
  MirrorSink,
  MirrorSyncState,
  MirrorSyncStatus,
  PageEnd,
  PageOutcome,
} from './types.ts';
