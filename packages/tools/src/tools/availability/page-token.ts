/**
 * expand_rrule's page tokens: where the next page starts (instances sent so far, the last one's
 * instant), bound to the call's rule by a digest of the arguments that decide the instances, so a
 * token given with another rule is refused rather than answered wrongly. Not secret: the
 * expansion reads no calendar, and a token made by hand only chooses where a page starts.
 */
import { createHash } from 'node:crypto';
import { CalgateError } from '@calgate/core';
import type { ExpansionRequest, PagePosition } from './expansion.ts';

const VERSION = 'r1';
const TOKEN = /^r1\.([A-Za-z0-9_-]{16})\.(\d{1,5})\.(-?\d{1,16})$/;

/** The arguments that decide the instances, digested. */
function ruleDigest(request: ExpansionRequest): string {
  const { rrule, dtstart, timeZone, durationMinutes, count, exdates } = request;
  return createHash('sha256')
    .update(JSON.stringify([rrule, dtstart, timeZone, durationMinutes, count, exdates]))
    .digest('base64url')
    .slice(0, 16);
}

export function pageToken(request: ExpansionRequest, next: PagePosition): string {
  return `${VERSION}.${ruleDigest(request)}.${next.delivered}.${next.after}`;
}

/** The position a token names, or a CalgateError saying why it is not one for this call. */
export function readPageToken(request: ExpansionRequest, token: string): PagePosition {
  const match = TOKEN.exec(token);
  const delivered = Number(match?.[2]);
  const after = Number(match?.[3]);
  if (
    match === null ||
    match[1] !== ruleDigest(request) ||
    !(delivered > 0 && delivered < request.count) ||
    !Number.isSafeInteger(after)
  ) {
    throw new CalgateError(
      'invalid_argument',
      'pageToken is not one an earlier page of this expansion gave: pass the nextPageToken of the last answer with the same rrule, dtstart, timeZone, durationMinutes, count and exdates, or leave pageToken out to start from the first instance.',
    );
  }
  return { delivered, after };
}
