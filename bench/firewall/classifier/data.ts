// Loads the firewall's DEV corpus (bench/firewall/frozen/dev/). The frozen TEST corpus next to it
// is never read: every load goes through readCorpusFile, which refuses any path inside it.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Entry {
  id: string;
  kind: string;
  lang: string;
  field: string;
  text: string;
  /** 1 = injection, 0 = benign. */
  label: 0 | 1;
}

export const DEV_DIR = fileURLToPath(new URL('../frozen/dev/', import.meta.url));
const TEST_DIR = fileURLToPath(new URL('../frozen/test/', import.meta.url));

/** Throws when `path` lies inside bench/firewall/frozen/test/ (by resolved path or by name). */
export function refuseFrozenTest(path: string): void {
  const full = resolve(path);
  const normalised = full.replaceAll('\\', '/');
  if (`${full}/`.startsWith(TEST_DIR) || /\/frozen\/test(\/|$)/.test(normalised)) {
    throw new Error(`refusing to read ${path}: the frozen test corpus is never used for training or tuning`);
  }
}

/** Reads one JSONL corpus file; every line becomes an entry with the given label. */
export function readCorpusFile(path: string, label: 0 | 1): Entry[] {
  refuseFrozenTest(path);
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => ({ ...(JSON.parse(line) as Omit<Entry, 'label'>), label }));
}

/** The DEV corpus: injections (label 1) then benign texts (label 0). */
export function loadDev(dir: string = DEV_DIR): Entry[] {
  return [...readCorpusFile(`${dir}/injections.jsonl`, 1), ...readCorpusFile(`${dir}/benign.jsonl`, 0)];
}
