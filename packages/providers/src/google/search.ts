/**
 * Text search on Google read directly (no mirror yet, or mirror reads off), with the meaning it
 * has everywhere else (@calgate/core's matcher). Google's own `q` means something else (whole
 * words, no accent folding, no word beginnings), so it is not sent: pages of the window are read
 * at the largest size and filtered here.
 *
 * Page tokens of such a listing are `q<n>.<token>`: the Google page at `<token>` (empty: the
 * first), of which the first `<n>` matches were already returned. Pages are always read at
 * MAX_PAGE_SIZE, so a token read again names the same events.
 */
import { CalgateError, eventMatcher } from '@calgate/core';
import type { CalendarEvent, EventPage } from '../types.ts';
import { MAX_PAGE_SIZE } from './page-size.ts';

const TOKEN = /^q(\d{1,9})\.(.*)$/s;

/** One Google page: its events and the token of the next one. */
export type GooglePageReader = (
  pageToken: string | undefined,
  pageSize: number,
) => Promise<{ items: CalendarEvent[]; nextPageToken?: string | undefined }>;

function decode(pageToken: string | undefined): { skip: number; token: string | undefined } {
  if (pageToken === undefined) {
    return { skip: 0, token: undefined };
  }
  const parsed = TOKEN.exec(pageToken);
  if (parsed === null) {
    throw new CalgateError(
      'invalid_argument',
      'The page token does not belong to this search; repeat the search without pageToken.',
    );
  }
  return { skip: Number(parsed[1]), token: parsed[2] === '' ? undefined : parsed[2] };
}

const encode = (skip: number, token: string | undefined) => `q${skip}.${token ?? ''}`;

/**
 * Up to `maxResults` events matching `query`, reading Google's pages until they are found or
 * the listing ends (as Google would have, searching server-side).
 */
export async function searchPages(
  query: string,
  maxResults: number,
  pageToken: string | undefined,
  read: GooglePageReader,
): Promise<EventPage> {
  const match = eventMatcher(query);
  if (match === null) {
    return { items: [] };
  }
  let { skip, token } = decode(pageToken);
  const items: CalendarEvent[] = [];
  for (;;) {
    const page = await read(token, MAX_PAGE_SIZE);
    const found = page.items.filter(match);
    const taken = found.slice(skip, skip + (maxResults - items.length));
    items.push(...taken);
    if (skip + taken.length < found.length) {
      return { items, nextPageToken: encode(skip + taken.length, token) };
    }
    if (page.nextPageToken === undefined) {
      return { items };
    }
    token = page.nextPageToken;
    skip = 0;
    if (items.length >= maxResults) {
      return { items, nextPageToken: encode(0, token) };
    }
  }
}
