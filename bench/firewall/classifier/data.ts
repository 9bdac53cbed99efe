// Loads the classifier's training data: the firewall's DEV corpus (bench/firewall/frozen/dev/),
// the training corpus (bench/firewall/train/<group>/<lang>-inj-NN.jsonl and <lang>-ben-NN.jsonl;
// FIREWALL_TRAIN_DIR names another folder of the same shape) and the SPENT frozen test sets. The
// fresh frozen test set is never read: every load goes through readCorpusFile, which refuses any
// frozen test set that is not listed in SPENT_ROUNDS.
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
const FROZEN_DIR = fileURLToPath(new URL('../frozen/', import.meta.url));

/**
 * Frozen test sets whose figure has been reported and has decided a change of the detector: each
 * was measured when fresh, and its figure stays recorded in bench/results/firewall.md. A spent set
 * is independent, hand-written data of exactly the kinds attackers use, so it becomes training data;
 * from then on its own figure is no longer a measurement (bench:firewall says so). The newest set
 * (round 7, frozen/test7) is not listed: it is the figure users get, and it is never read here.
 */
export const SPENT_ROUNDS: readonly string[] = ['test', 'test2', 'test3', 'test4', 'test5', 'test6'];

/**
 * Throws when `path` lies inside a frozen test set (bench/firewall/frozen/test, test2, …, by resolved
 * path or by name) that is not spent.
 */
export function refuseFrozenTest(path: string): void {
  const normalised = resolve(path).replaceAll('\\', '/');
  const round = /\/frozen\/(test\d*)(\/|$)/.exec(normalised)?.[1];
  const insideFrozen = `${normalised}/`.startsWith(FROZEN_DIR.replaceAll('\\', '/'));
  if (round !== undefined && !(insideFrozen && SPENT_ROUNDS.includes(round))) {
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

/** The spent frozen test sets (SPENT_ROUNDS), ids prefixed with their round. */
export function loadSpent(rounds: readonly string[] = SPENT_ROUNDS): Entry[] {
  return rounds.flatMap((round) =>
    [
      ...readCorpusFile(join(FROZEN_DIR, round, 'injections.jsonl'), 1),
      ...readCorpusFile(join(FROZEN_DIR, round, 'benign.jsonl'), 0),
    ].map((e) => ({ ...e, id: `${round}:${e.id}` })),
  );
}

/**
 * DEV, the training corpus, the spent frozen sets (FIREWALL_SPENT=0 leaves them out) and the corpus
 * written with the rules together, each text once.
 */
export function loadAll(
  withRulesCorpus = process.env.FIREWALL_RULES_CORPUS !== '0',
  withSpent = process.env.FIREWALL_SPENT !== '0',
): Entry[] {
  const out: Entry[] = [];
  const texts = new Set<string>();
  const sources = [...loadDev(), ...loadTrain(), ...(withSpent ? loadSpent() : [])];
  for (const e of [...sources, ...(withRulesCorpus ? loadRulesCorpus() : [])]) {
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
