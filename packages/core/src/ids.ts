import { randomFillSync } from 'node:crypto';

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
  | 'inv'
  | 'cnf'
  | 'fed';

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const BASE32HEX = '0123456789abcdefghijklmnopqrstuv';

/**
 * Random bytes come from the system's generator a block at a time (every request gets an id, and
 * one call per id costs more than the id); each byte is handed out once.
 */
const pool = Buffer.alloc(4096);
let poolUsed = pool.length;

/** `size` unused random bytes as `alphabet` characters, one per byte (the byte modulo the alphabet's size). */
function randomText(size: number, alphabet: string): string {
  if (poolUsed + size > pool.length) {
    randomFillSync(pool);
    poolUsed = 0;
  }
  let out = '';
  for (let i = poolUsed; i < poolUsed + size; i++) {
    out += alphabet[(pool[i] as number) % alphabet.length];
  }
  poolUsed += size;
  return out;
}

/** A new id such as `cal_3hK9...`: 16 random bytes, ~93 bits after the base58 fold. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomText(16, BASE58)}`;
}

/**
 * An event id in Google's alphabet (lowercase base32hex, 5–1024 characters), so that ids chosen
 * by Calgate are valid for Google and local calendars alike. 130 random bits.
 */
export function newEventId(): string {
  return randomText(26, BASE32HEX);
}

export function hasPrefix(id: string, prefix: IdPrefix): boolean {
  return id.startsWith(`${prefix}_`);
}
