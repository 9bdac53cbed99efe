/** What a write through the mirror sends upstream: an instance's ETag as the upstream knows it. */
import { instanceEtag, parseInstanceId } from '../local/rows.ts';
import type { CalendarProvider, CalendarRef, WriteOptions } from '../types.ts';
import type { MirrorReadDeps } from './provider.ts';

/**
 * An unmodified instance listed from the mirror carries an ETag Calgate made (Google's own
 * instance ETags are not in the mirror). When a write names that ETag and the mirror's copy of
 * the series still yields it, the instance's ETag at Google is sent instead, which Google checks
 * again. Any other ETag goes to Google as it is (a stale one fails there).
 */
export async function upstreamWriteOptions(
  mirror: Pick<MirrorReadDeps['mirror'], 'resources'>,
  upstream: CalendarProvider,
  calendar: CalendarRef,
  eventId: string,
  options: WriteOptions,
): Promise<WriteOptions> {
  const parsed = options.ifMatch === undefined ? null : parseInstanceId(eventId);
  if (parsed === null) {
    return options;
  }
  const rows = await mirror.resources(calendar.id, [parsed.masterId, eventId]);
  const master = rows.find((row) => row.eventId === parsed.masterId);
  if (
    master === undefined ||
    rows.some((row) => row.eventId === eventId) ||
    instanceEtag(master.etag ?? '', parsed.key) !== options.ifMatch
  ) {
    return options;
  }
  const current = await upstream.getEvent(calendar, eventId);
  return current.etag === undefined ? options : { ...options, ifMatch: current.etag };
}
