/**
 * One calendar object by href: read, created under If-None-Match, rewritten under If-Match (one
 * retry on 412) and deleted; each write is read back, as servers rewrite what they keep.
 */
import { randomUUID } from 'node:crypto';
import { CalgateError } from '@calgate/core';
import type { CaldavObject } from './client.ts';
import { type DavSession, upstream } from './transport.ts';

/** One object; `not_found` when it is gone. */
export async function getObject(
  session: DavSession,
  href: string,
  base: string,
  signal?: AbortSignal,
): Promise<CaldavObject> {
  const url = new URL(href, base).toString();
  const response = await session.request('GET', url, signal === undefined ? {} : { signal });
  if (response.status === 404 || response.status === 410) {
    throw new CalgateError(
      'not_found',
      `The event at ${new URL(url).pathname} no longer exists on the CalDAV server.`,
    );
  }
  if (response.status !== 200) {
    throw upstream(
      `The CalDAV server answered GET with HTTP ${response.status}.`,
      response.status >= 500,
      response.status,
    );
  }
  return { href, url, etag: response.headers.get('etag') ?? undefined, data: response.body };
}

async function putObject(
  session: DavSession,
  url: string,
  data: string,
  condition: { ifMatch: string } | { ifNoneMatch: '*' },
): Promise<number> {
  const response = await session.request('PUT', url, {
    headers: {
      'content-type': 'text/calendar; charset=utf-8',
      ...('ifMatch' in condition ? { 'if-match': condition.ifMatch } : { 'if-none-match': '*' }),
    },
    body: data,
  });
  if (response.status === 412) {
    return 412;
  }
  if (response.status === 403 || response.status === 405) {
    throw new CalgateError(
      'permission_denied',
      `The CalDAV server does not let this account write ${new URL(url).pathname} (HTTP ${response.status}).`,
    );
  }
  if (response.status < 200 || response.status >= 300) {
    const retry = response.status >= 500;
    throw new CalgateError(
      retry ? 'upstream_unavailable' : 'invalid_argument',
      `The CalDAV server refused the event (HTTP ${response.status}).`,
      { retry, context: { status: response.status } },
    );
  }
  return response.status;
}

/**
 * Stores a new object in the calendar under `name` (a fresh random name when absent); returns
 * it as the server keeps it. An object already there is `already_exists`.
 */
export async function createObject(
  session: DavSession,
  calendarUrl: string,
  data: string,
  name?: string,
): Promise<CaldavObject> {
  const base = calendarUrl.endsWith('/') ? calendarUrl : `${calendarUrl}/`;
  const href = new URL(encodeURIComponent(name ?? `${randomUUID()}.ics`), base).pathname;
  const url = new URL(href, base).toString();
  const status = await putObject(session, url, data, { ifNoneMatch: '*' });
  if (status === 412) {
    throw new CalgateError('already_exists', `The CalDAV server already has an object at ${href}.`);
  }
  return getObject(session, href, base);
}

/** What an update needs besides the object: see `updateObject`. */
export interface UpdateOptions {
  /** The event as a person knows it (its summary), for a conflict's sentence. */
  label: string;
  /** The copy the caller already holds (else the object is read first). */
  known?: { etag: string; data: string };
  /**
   * The properties (in the tools' words) that the text read first and the text found after a 412
   * differ in and that `transform` sets too: another client's edit of what this one changes.
   */
  clash?: (before: string, after: string) => string[];
}

/**
 * Rewrites one object with `transform` under If-Match. On 412 (changed elsewhere) the object is
 * read again and `transform` applied to the new text once, unless the other change touched what
 * `transform` sets (`clash`): then, as on a second 412, the answer is a `conflict` naming the
 * event and nothing is written, so an edit made elsewhere is never lost.
 */
export async function updateObject(
  session: DavSession,
  href: string,
  base: string,
  transform: (data: string) => string | Promise<string>,
  options: UpdateOptions,
): Promise<CaldavObject> {
  let current = options.known ?? (await getObject(session, href, base));
  const url = new URL(href, base).toString();
  for (let attempt = 0; attempt < 2; attempt += 1) {
    if (current.etag === undefined) {
      throw upstream('The CalDAV server gives no ETag for the event, so it cannot be changed safely.', false);
    }
    const status = await putObject(session, url, await transform(current.data), { ifMatch: current.etag });
    if (status !== 412) {
      return getObject(session, href, base);
    }
    if (attempt === 0) {
      const fresh = await getObject(session, href, base);
      const both = options.clash?.(current.data, fresh.data) ?? [];
      if (both.length > 0) {
        throw new CalgateError(
          'conflict',
          `The event "${options.label}" was changed on the CalDAV server while Calgate was saving it, in its ${both.join(', ')} too, so nothing was written: read it again and decide what it should be.`,
          { context: { changed: both } },
        );
      }
      current = fresh;
    }
  }
  throw new CalgateError(
    'conflict',
    `The event "${options.label}" was changed on the CalDAV server while Calgate was saving it; read it again and retry.`,
    { retry: true },
  );
}

/** Removes an object; with `ifMatch`, only the version last read (412 → `precondition_failed`). */
export async function deleteObject(
  session: DavSession,
  href: string,
  base: string,
  options: { ifMatch?: string; label?: string } = {},
): Promise<void> {
  const url = new URL(href, base).toString();
  const response = await session.request('DELETE', url, {
    headers: options.ifMatch === undefined ? {} : { 'if-match': options.ifMatch },
  });
  if (response.status === 412) {
    throw new CalgateError(
      'precondition_failed',
      `The event ${options.label === undefined ? '' : `"${options.label}" `}was changed on the CalDAV server since it was read; read it again before deleting.`,
    );
  }
  if (response.status === 404 || response.status === 410) {
    throw new CalgateError(
      'not_found',
      `The event at ${new URL(url).pathname} no longer exists on the CalDAV server.`,
    );
  }
  if (response.status === 403 || response.status === 405) {
    throw new CalgateError(
      'permission_denied',
      `The CalDAV server does not let this account delete ${new URL(url).pathname}.`,
    );
  }
  if (response.status < 200 || response.status >= 300) {
    throw upstream(
      `The CalDAV server answered DELETE with HTTP ${response.status}.`,
      response.status >= 500,
      response.status,
    );
  }
}
