// Writes packages/tools/src/tokens/o200k.bin.br: the o200k_base byte-pair ranks in the compact form
// tokens/table.ts reads (format calgate-o200k-v1): for each rank from 0, one byte with the token's
// length in bytes, then its bytes; brotli-compressed. Made from gpt-tokenizer's table, which
// packages/tools/test/token-count.test.ts compares it with.
import { writeFileSync } from 'node:fs';
import { brotliCompressSync, constants } from 'node:zlib';
import ranks from 'gpt-tokenizer/bpeRanks/o200k_base';

const encoder = new TextEncoder();
const parts: number[] = [];
for (const [rank, token] of (ranks as (string | number[])[]).entries()) {
  if (token === undefined) {
    throw new Error(`rank ${rank} has no token`);
  }
  const bytes = typeof token === 'string' ? encoder.encode(token) : Uint8Array.from(token);
  if (bytes.length === 0 || bytes.length > 255) {
    throw new Error(`rank ${rank} is ${bytes.length} bytes long`);
  }
  parts.push(bytes.length, ...bytes);
}
const raw = Uint8Array.from(parts);
const packed = brotliCompressSync(raw, {
  params: {
    [constants.BROTLI_PARAM_QUALITY]: 11,
    // A 256 kB window: unpacking it needs little memory.
    [constants.BROTLI_PARAM_LGWIN]: 18,
    [constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
  },
});
const out = new URL('../packages/tools/src/tokens/o200k.bin.br', import.meta.url);
writeFileSync(out, packed);
console.info(`${ranks.length} ranks, ${raw.length} bytes, ${packed.length} compressed`);
