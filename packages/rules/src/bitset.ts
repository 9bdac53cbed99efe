/** Fixed-size bit sets over occurrence indexes, 32 per word. */
export type Bitset = Uint32Array;

export const emptyBits = (size: number): Bitset => new Uint32Array((size + 31) >>> 5);

export function setBit(bits: Bitset, index: number): void {
  bits[index >>> 5] = (bits[index >>> 5] as number) | (1 << (index & 31));
}

export function hasBit(bits: Bitset, index: number): boolean {
  return ((bits[index >>> 5] as number) & (1 << (index & 31))) !== 0;
}

export function fromIndexes(size: number, indexes: readonly number[] | undefined): Bitset {
  const bits = emptyBits(size);
  for (const index of indexes ?? []) {
    setBit(bits, index);
  }
  return bits;
}

/** `a` ∧ `b`, written into `a`. */
export function andInto(a: Bitset, b: Bitset): Bitset {
  for (let i = 0; i < a.length; i++) {
    a[i] = (a[i] as number) & (b[i] as number);
  }
  return a;
}

/** `a` ∨ `b`, written into `a`. */
export function orInto(a: Bitset, b: Bitset): Bitset {
  for (let i = 0; i < a.length; i++) {
    a[i] = (a[i] as number) | (b[i] as number);
  }
  return a;
}

/** The complement of `a` within [0, size), as a new set. */
export function complement(a: Bitset, size: number): Bitset {
  const out = new Uint32Array(a.length);
  for (let i = 0; i < a.length; i++) {
    out[i] = ~(a[i] as number);
  }
  const tail = size & 31;
  if (tail !== 0 && out.length > 0) {
    out[out.length - 1] = (out[out.length - 1] as number) & ((1 << tail) - 1);
  }
  return out;
}

export function countBits(bits: Bitset): number {
  let count = 0;
  for (let i = 0; i < bits.length; i++) {
    let v = bits[i] as number;
    v -= (v >>> 1) & 0x55555555;
    v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
    count += (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) as number;
  }
  return count;
}

export function indexesOf(bits: Bitset): number[] {
  const out: number[] = [];
  for (let i = 0; i < bits.length; i++) {
    let v = bits[i] as number;
    while (v !== 0) {
      const low = v & -v;
      out.push((i << 5) + 31 - Math.clz32(low));
      v ^= low;
    }
  }
  return out;
}
