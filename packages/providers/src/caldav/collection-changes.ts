/**
 * A collection's changes: RFC 6578 sync-collection, and getctag/sync-token with the ETag listing
 * for servers that offer no sync-collection.
 */
import type { CaldavEtag, CollectionState, SyncOutcome } from './client.ts';
import { type DavSession, dav, upstream } from './transport.ts';
import {
  childNames,
  errorConditions,
  foundProps,
  parseMultistatus,
  propfindBody,
  syncCollectionBody,
  textOf,
} from './xml.ts';

/** RFC 6578 sync-collection: changes since `token` (everything when undefined). */
export async function syncCollection(
  session: DavSession,
  calendarUrl: string,
  token: string | undefined,
  signal?: AbortSignal,
): Promise<SyncOutcome> {
  const response = await session.request('REPORT', calendarUrl, {
    headers: { depth: '1' },
    body: syncCollectionBody(token),
    ...(signal === undefined ? {} : { signal }),
  });
  if (response.status !== 207) {
    const conditions = errorConditions(response.body);
    if (token !== undefined && conditions.includes('valid-sync-token')) {
      return { kind: 'token-invalid' };
    }
    if (
      conditions.includes('sync-traversal-supported') ||
      conditions.includes('supported-report') ||
      response.status === 501 ||
      (token === undefined && (response.status === 403 || response.status === 405 || response.status === 400))
    ) {
      return { kind: 'unsupported' };
    }
    if (token !== undefined && (response.status === 403 || response.status === 405)) {
      // Refused with a token and no reason given: a server that no longer offers the report
      // refuses it without a token too (then compare ETags); one that still offers it refused
      // the token.
      const bare = await syncCollection(session, calendarUrl, undefined, signal);
      return bare.kind === 'unsupported' ? bare : { kind: 'token-invalid' };
    }
    if (
      token !== undefined &&
      (response.status === 400 || response.status === 409 || response.status === 412)
    ) {
      return { kind: 'token-invalid' };
    }
    if (token !== undefined && response.status >= 500) {
      // Some servers (Xandikos) fail on a token they cannot use instead of naming the
      // precondition. When the collection itself still answers, the token was the trouble.
      const healthy = await collectionState(session, calendarUrl, signal).then(
        () => true,
        () => false,
      );
      if (healthy) {
        return { kind: 'token-invalid' };
      }
    }
    throw upstream(
      `The CalDAV server answered sync-collection with HTTP ${response.status}.`,
      response.status >= 500,
      response.status,
    );
  }
  const multistatus = parseMultistatus(response.body);
  const changed: CaldavEtag[] = [];
  const removed: string[] = [];
  const collection = new URL(response.url).pathname;
  for (const entry of multistatus.responses) {
    const entryUrl = new URL(entry.href, response.url);
    if (entryUrl.pathname === collection) {
      continue;
    }
    if (entry.status === 404) {
      removed.push(entry.href);
      continue;
    }
    const props = foundProps(entry);
    if (childNames(props.resourcetype).includes('collection')) {
      continue;
    }
    changed.push({ href: entry.href, url: entryUrl.toString(), etag: textOf(props.getetag)?.trim() });
  }
  return { kind: 'changes', token: multistatus.syncToken, changed, removed };
}

/** getctag and sync-token of a collection (either may be missing). */
export async function collectionState(
  session: DavSession,
  calendarUrl: string,
  signal?: AbortSignal,
): Promise<CollectionState> {
  const { multistatus } = await dav(
    session,
    'PROPFIND',
    calendarUrl,
    propfindBody(['cs:getctag', 'd:sync-token']),
    '0',
    signal,
  );
  const response = multistatus.responses[0];
  const props = response === undefined ? {} : foundProps(response);
  const ctag = textOf(props.getctag)?.trim();
  const syncToken = textOf(props['sync-token'])?.trim();
  return { ctag: ctag || undefined, syncToken: syncToken || undefined };
}

/** Every object's href and ETag (the fallback when sync-collection is not offered). */
export async function listEtags(
  session: DavSession,
  calendarUrl: string,
  signal?: AbortSignal,
): Promise<CaldavEtag[]> {
  const { multistatus, url } = await dav(
    session,
    'PROPFIND',
    calendarUrl,
    propfindBody(['d:getetag', 'd:resourcetype']),
    '1',
    signal,
  );
  const collection = new URL(url).pathname;
  const out: CaldavEtag[] = [];
  for (const entry of multistatus.responses) {
    const entryUrl = new URL(entry.href, url);
    const props = foundProps(entry);
    if (entryUrl.pathname === collection || childNames(props.resourcetype).includes('collection')) {
      continue;
    }
    out.push({ href: entry.href, url: entryUrl.toString(), etag: textOf(props.getetag)?.trim() });
  }
  return out;
}
