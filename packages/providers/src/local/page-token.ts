import { CalgateError } from '@calgate/core';

/** Local page tokens are an offset into the ordered result, opaque to callers. */
export function encodePageToken(offset: number): string {
  return Buffer.from(JSON.stringify({ o: offset })).toString('base64url');
}

export function decodePageToken(token: string): number {
  try {
    const value = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { o?: unknown };
    if (typeof value.o === 'number' && Number.isInteger(value.o) && value.o >= 0 && value.o <= 1_000_000) {
      return value.o;
    }
  } catch {}
  throw new CalgateError(
    'invalid_argument',
    'pageToken is not valid for this calendar; omit it to start over.',
  );
}
