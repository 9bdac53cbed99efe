import { randomBytes } from 'node:crypto';

/** Prefixes of Calgate's own ids, so a log line says what it names. */
export type IdPrefix =
  | 'tnt'
  | 'usr'
  | 'key'
  | 'con'
  | 'cal'
  | 'bkg'
  | 'req'
  | 'prj'
  | 'rul'
  | 'tgt'
  | 'sch'
  | 'ocl'
  | 'inv';

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

function base58(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) {
    out += BASE58[byte % 58];
  }
  return out;
}

/** A new id such as `cal_3hK9...`: 16 random bytes, ~93 bits after the base58 fold. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${base58(randomBytes(16))}`;
}

const BASE32HEX = '0123456789abcdefghijklmnopqrstuv';

/**
 * An event id in Google's alphabet (lowercase base32hex, 5–1024 characters), so that ids chosen
 * by Calgate are valid for Google and local calendars alike. 130 random bits.
 */
export function newEventId(): string {
  const bytes = randomBytes(26);
  let out = '';
  for (const byte of bytes) {
    out += BASE32HEX[byte & 31];
  }
  return out;
}

export function hasPrefix(id: string, prefix: IdPrefix): boolean {
  return id.startsWith(`${prefix}_`);
}
