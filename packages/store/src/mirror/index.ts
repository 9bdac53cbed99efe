/** The event mirror: upstream calendars' events (Google's today) kept in Postgres by incremental sync. */

export {
  MirrorChannelRepository,
  type MirrorChannelRow,
  type NewMirrorChannel,
  type NotificationOutcome,
  type WatchedChannel,
  type WatchTarget,
} from './channels.ts';
export { type FeedHandler, type FeedStart, type FeedTurn, MirrorFeedCursors } from './cursors.ts';
export { MirrorRepository } from './repository.ts';
export type {
  MirrorChange,
  MirrorEventInput,
  MirrorEventRow,
  MirrorFreshness,
  MirrorRangeQuery,
  MirrorResourceRow,
  MirrorSearchHit,
  MirrorSink,
  MirrorSyncState,
  MirrorSyncStatus,
  PageEnd,
  PageOutcome,
} from './types.ts';
export { MIRROR_VERSIONS_CHANNEL, type MirrorVersionEvents, MirrorVersionListener } from './versions.ts';
