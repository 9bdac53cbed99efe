/**
 * The o200k_base table: `o200k.bin.br` beside this file (written by scripts/o200k-table.ts from
 * gpt-tokenizer's ranks) holds each rank's bytes, 1.6 MB unpacked, indexed here by an
 * open-addressing hash (2 MB) and the ranks' offsets (0.8 MB), and the look-ups of a byte
 * sequence or an ASCII string in it.
 */
import { readFileSync } from 'node:fs';
import { brotliDecompressSync } from 'node:zlib';

export interface Table {
  /** The unpacked file: each rank's length in bytes, then its bytes. */
  bytes: Uint8Array;
  /** Where rank r's bytes start in `bytes` (its length is the byte before). */
  starts: Uint32Array;
  /** Open addressing on hashOf(bytes): rank + 1, 0 where empty. */
  slots: Int32Array;
  mask: number;
}

export function load(): Table {
  const bytes: Uint8Array = brotliDecompressSync(readFileSync(new URL('./o200k.bin.br', import.meta.url)));
  let count = 0;
  for (let at = 0; at < bytes.length; at += (bytes[at] as number) + 1) {
    count += 1;
  }
  const starts = new Uint32Array(count);
  let size = 1;
  while (size < count * 2.5) {
    size <<= 1;
  }
  const slots = new Int32Array(size);
  const mask = size - 1;
  let rank = 0;
  for (let at = 0; at < bytes.length; rank += 1) {
    const length = bytes[at] as number;
    starts[rank] = at + 1;
    let slot = hashOf(bytes, at + 1, at + 1 + length) & mask;
    while (slots[slot] !== 0) {
      slot = (slot + 1) & mask;
    }
    slots[slot] = rank + 1;
    at += length + 1;
  }
  return { bytes, starts, slots, mask };
}

/** FNV-1a over bytes[from, to). */
function hashOf(bytes: Uint8Array, from: number, to: number): number {
  let hash = 0x811c9dc5;
  for (let i = from; i < to; i += 1) {
    hash = Math.imul(hash ^ (bytes[i] as number), 0x01000193);
  }
  return hash >>> 0;
}

export const NONE = 0x7fffffff;

/** The rank of bytes[from, to) as one token, or NONE. */
export function rankOf(t: Table, bytes: Uint8Array, from: number, to: number): number {
  const length = to - from;
  let slot = hashOf(bytes, from, to) & t.mask;
  for (;;) {
    const entry = t.slots[slot] as number;
    if (entry === 0) {
      return NONE;
    }
    const rank = entry - 1;
    const start = t.starts[rank] as number;
    if (t.bytes[start - 1] === length) {
      let same = true;
      for (let i = 0; i < length; i += 1) {
        if (t.bytes[start + i] !== bytes[from + i]) {
          same = false;
          break;
        }
      }
      if (same) {
        return rank;
      }
    }
    slot = (slot + 1) & t.mask;
  }
}

/** Whether text[from, to), all ASCII (its characters are its bytes), is one token: rankOf without a copy. */
export function isAsciiToken(t: Table, text: string, from: number, to: number): boolean {
  const length = to - from;
  let hash = 0x811c9dc5;
  for (let i = from; i < to; i += 1) {
    hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  }
  let slot = (hash >>> 0) & t.mask;
  for (;;) {
    const entry = t.slots[slot] as number;
    if (entry === 0) {
      return false;
    }
    const start = t.starts[entry - 1] as number;
    if (t.bytes[start - 1] === length) {
      let same = true;
      for (let i = 0; i < length; i += 1) {
        if (t.bytes[start + i] !== text.charCodeAt(from + i)) {
          same = false;
          break;
        }
      }
      if (same) {
        return true;
      }
    }
    slot = (slot + 1) & t.mask;
  }
}
