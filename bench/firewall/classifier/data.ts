// Loads the classifier's training data: the firewall's DEV corpus (bench/firewall/frozen/dev/) and
// the training corpus (bench/firewall/train/<group>/<lang>-inj-NN.jsonl and <lang>-ben-NN.jsonl;
// FIREWALL_TRAIN_DIR names another folder of the same shape). The frozen TEST corpus is never
// read: every load goes through readCorpusFile, which refuses any path inside it.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TRAIN_ONLY } from './eval.ts';

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
export const TRAIN_DIR =
  process.env.FIREWALL_TRAIN_DIR ?? fileURLToPath(new URL('../train/', import.meta.url));
const TEST_DIR = fileURLToPath(new URL('../frozen/test/', import.meta.url));

/** Throws when `path` lies inside a frozen test set, bench/firewall/frozen/test or test2, … (by resolved path or by name). */
export function refuseFrozenTest(path: string): void {
  const full = resolve(path);
  const normalised = full.replaceAll('\\', '/');
  if (`${full}/`.startsWith(TEST_DIR) || /\/frozen\/test\d*(\/|$)/.test(normalised)) {
    throw new Error(`refusing to read ${path}: the frozen test corpus is never used for training or tuning`);
  }
}

/**
 * Reads one JSONL corpus file; every line becomes an entry with the given label. `lenient` skips
 * a line that is not JSON (one being written) instead of throwing.
 */
export function readCorpusFile(path: string, label: 0 | 1, lenient = false): Entry[] {
  refuseFrozenTest(path);
  const out: Entry[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.trim() === '') {
      continue;
    }
    try {
      out.push({ ...(JSON.parse(line) as Omit<Entry, 'label'>), label });
    } catch (error) {
      if (!lenient) {
        throw error;
      }
    }
  }
  return out;
}

/** The DEV corpus: injections (label 1) then benign texts (label 0). */
export function loadDev(dir: string = DEV_DIR): Entry[] {
  return [...readCorpusFile(`${dir}/injections.jsonl`, 1), ...readCorpusFile(`${dir}/benign.jsonl`, 0)];
}

/** Every `*-inj-*.jsonl` (label 1) and `*-ben-*.jsonl` (label 0) file under `dir`, in path order. */
export function loadTrain(dir: string = TRAIN_DIR): Entry[] {
  if (!existsSync(dir)) {
    return [];
  }
  const files: string[] = [];
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) {
        walk(path);
      } else if (/-(inj|ben)-[^/]*\.jsonl$/.test(entry.name)) {
        files.push(path);
      }
    }
  };
  walk(dir);
  files.sort((a, b) => relative(dir, a).localeCompare(relative(dir, b)));
  const seen = new Set<string>();
  const out: Entry[] = [];
  for (const file of files) {
    const label = /-inj-[^/]*$/.test(file) ? 1 : 0;
    for (const e of readCorpusFile(file, label, true)) {
      // A line cut off mid-write, or a text given twice, is skipped.
      if (typeof e.text !== 'string' || e.text.trim() === '' || seen.has(e.text)) {
        continue;
      }
      seen.add(e.text);
      out.push({
        ...e,
        id: e.id ?? `${relative(dir, file)}:${out.length}`,
        lang: e.lang ?? 'xx',
        kind: e.kind ?? (label ? 'injection' : 'benign'),
        field: e.field ?? 'description',
      });
    }
  }
  return out;
}

export const RULES_CORPUS_DIR = fileURLToPath(new URL('../', import.meta.url));

/** The corpus written with the rules (bench/firewall/injections.jsonl and benign.jsonl). */
export function loadRulesCorpus(dir: string = RULES_CORPUS_DIR): Entry[] {
  return [
    ...readCorpusFile(`${dir}/injections.jsonl`, 1).map((e) => ({ ...e, kind: TRAIN_ONLY })),
    ...readCorpusFile(`${dir}/benign.jsonl`, 0).map((e) => ({ ...e, kind: TRAIN_ONLY })),
  ];
}

/** DEV, the training corpus and the corpus written with the rules together, each text once. */
export function loadAll(withRulesCorpus = process.env.FIREWALL_RULES_CORPUS !== '0'): Entry[] {
  const out: Entry[] = [];
  const texts = new Set<string>();
  for (const e of [...loadDev(), ...loadTrain(), ...(withRulesCorpus ? loadRulesCorpus() : [])]) {
    if (!texts.has(e.text)) {
      texts.add(e.text);
      out.push(e);
    }
  }
  return out;
}

/** 50 synthetic descriptions of `size` characters, each the entries' texts joined from a different start. */
export function longDescriptions(entries: readonly Entry[], size: number): string[] {
  return Array.from({ length: 50 }, (_, i) => {
    let s = '';
    for (let j = i; s.length < size; j = (j + 7) % entries.length) {
      s += `${entries[j]?.text ?? ''}\n`;
    }
    return s.slice(0, size);
  });
}
