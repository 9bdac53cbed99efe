/**
 * A local HTTP server publishing iCalendar feeds as calendar sites do: each path has a body, an
 * optional ETag and Last-Modified, and answers 304 to a matching If-None-Match or an
 * If-Modified-Since not older than its Last-Modified. It counts what it answered per path, so a
 * test can tell a conditional request answered 304 from a body sent again.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PublishedFeed {
  body: string;
  /** Answered instead of the feed (404, 500 …) while set. */
  status?: number;
  contentType?: string;
  /** Validators: an ETag (quoted by the server), a Last-Modified (whole seconds). */
  etag?: string | undefined;
  lastModified?: Date | undefined;
}

export interface FeedRequest {
  status: number;
  headers: IncomingHttpHeaders;
}

export interface FeedServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  url(path: string): string;
  publish(path: string, feed: PublishedFeed): void;
  /** Changes part of a published feed (the body, its status, its validators). */
  update(path: string, change: Partial<PublishedFeed>): void;
  requests(path: string): FeedRequest[];
  count(path: string, status: number): number;
  close(): Promise<void>;
}

export async function startFeedServer(): Promise<FeedServer> {
  const feeds = new Map<string, PublishedFeed>();
  const seen = new Map<string, FeedRequest[]>();
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    const answer = (status: number, headers: Record<string, string> = {}, body = '') => {
      seen.set(path, [...(seen.get(path) ?? []), { status, headers: request.headers }]);
      response.writeHead(status, headers);
      response.end(body);
    };
    const feed = feeds.get(path);
    if (feed === undefined) {
      answer(404, { 'content-type': 'text/plain' }, 'not found');
      return;
    }
    if (feed.status !== undefined) {
      answer(feed.status, { 'content-type': 'text/plain' }, `status ${feed.status}`);
      return;
    }
    const validators: Record<string, string> = {};
    if (feed.etag !== undefined) {
      validators.etag = `"${feed.etag}"`;
    }
    if (feed.lastModified !== undefined) {
      validators['last-modified'] = feed.lastModified.toUTCString();
    }
    const ifNoneMatch = request.headers['if-none-match'];
    const ifModifiedSince = request.headers['if-modified-since'];
    const unchanged =
      ifNoneMatch !== undefined && validators.etag !== undefined
        ? ifNoneMatch === validators.etag
        : ifModifiedSince !== undefined && feed.lastModified !== undefined
          ? Math.floor(feed.lastModified.getTime() / 1000) <= Math.floor(Date.parse(ifModifiedSince) / 1000)
          : false;
    if (unchanged) {
      answer(304, validators);
      return;
    }
    answer(
      200,
      { 'content-type': feed.contentType ?? 'text/calendar; charset=utf-8', ...validators },
      feed.body,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    url: (path) => `${origin}${path}`,
    publish(path, feed) {
      feeds.set(path, { ...feed });
    },
    update(path, change) {
      const feed = feeds.get(path);
      if (feed === undefined) {
        throw new Error(`no feed at ${path}`);
      }
      feeds.set(path, { ...feed, ...change });
    },
    requests: (path) => seen.get(path) ?? [],
    count: (path, status) => (seen.get(path) ?? []).filter((request) => request.status === status).length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A VCALENDAR of hand-written VEVENT blocks (each a list of content lines). */
export function vcalendar(header: string[], events: string[][]): string {
  return [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//Feed//Test//EN',
    ...header,
    ...events.flatMap((lines) => ['BEGIN:VEVENT', 'DTSTAMP:20260101T000000Z', ...lines, 'END:VEVENT']),
    'END:VCALENDAR',
    '',
  ].join('\r\n');
}
