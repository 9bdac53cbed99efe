/**
 * Many occurrences tested against many queries at once, as a preview or a classification run
 * does. Each field is indexed once (word → occurrences, domain → occurrences, a packed column of
 * weekday, time and flags), so a condition costs a lookup and a bit-set operation instead of a
 * visit to every occurrence.
 */
import { type Bitset, countBits, emptyBits, indexesOf, setBit } from './bitset.ts';
import { type EventOccurrence, type PreparedOccurrence, prepareOccurrence } from './occurrence.ts';
import type { CompiledQuery } from './query.ts';

export type WordFieldName = 'title' | 'description' | 'calendar' | 'text';
export type KeyFieldName = 'domain' | 'email' | 'attendee';

export class OccurrenceSet {
  readonly items: readonly PreparedOccurrence[];
  readonly size: number;
  readonly #words = new Map<WordFieldName, Map<string, number[]>>();
  readonly #keys = new Map<KeyFieldName, Map<string, number[]>>();
  #facts: Int32Array | undefined;

  constructor(occurrences: readonly (EventOccurrence | PreparedOccurrence)[]) {
    this.items = occurrences.map(prepareOccurrence);
    this.size = this.items.length;
  }

  /** The occurrences (by index) that match `query`, as a bit set. */
  select(query: CompiledQuery): Bitset {
    return query.select(this);
  }

  /** Indexes into `items` of the occurrences that match, ascending. */
  indexesOf(query: CompiledQuery): number[] {
    return indexesOf(query.select(this));
  }

  count(query: CompiledQuery): number {
    return countBits(query.select(this));
  }

  /** Word → indexes of occurrences whose field has that word. */
  wordIndex(field: WordFieldName): Map<string, number[]> {
    let index = this.#words.get(field);
    if (index === undefined) {
      index = new Map();
      for (let i = 0; i < this.size; i++) {
        const item = this.items[i] as PreparedOccurrence;
        if (field === 'title') {
          addAll(index, item.titleWords, i);
        } else if (field === 'description') {
          addAll(index, item.descriptionWords, i);
        } else if (field === 'calendar') {
          addAll(index, item.calendarWords, i);
        } else {
          // addAll skips an index already last in a list, so a word in several fields counts once.
          addAll(index, item.titleWords, i);
          addAll(index, item.descriptionWords, i);
          for (const words of item.attendees.wordFields) {
            addAll(index, words, i);
          }
        }
      }
      this.#words.set(field, index);
    }
    return index;
  }

  /** Folded domain, email, or attendee email/name → indexes of occurrences that have it. */
  keyIndex(field: KeyFieldName): Map<string, number[]> {
    let index = this.#keys.get(field);
    if (index === undefined) {
      index = new Map();
      for (let i = 0; i < this.size; i++) {
        const attendees = (this.items[i] as PreparedOccurrence).attendees;
        addAll(
          index,
          field === 'domain' ? attendees.domains : field === 'email' ? attendees.emails : attendees.texts,
          i,
        );
      }
      this.#keys.set(field, index);
    }
    return index;
  }

  /** Each occurrence's packed facts (see `PreparedOccurrence.facts`). */
  get facts(): Int32Array {
    if (this.#facts === undefined) {
      const facts = new Int32Array(this.size);
      for (let i = 0; i < this.size; i++) {
        facts[i] = (this.items[i] as PreparedOccurrence).facts;
      }
      this.#facts = facts;
    }
    return this.#facts;
  }

  /** The occurrences among `candidates` (all when left out) that pass `test`. */
  filter(test: (item: PreparedOccurrence) => boolean, candidates?: Bitset): Bitset {
    const bits = emptyBits(this.size);
    if (candidates === undefined) {
      for (let i = 0; i < this.size; i++) {
        if (test(this.items[i] as PreparedOccurrence)) {
          setBit(bits, i);
        }
      }
      return bits;
    }
    for (const i of indexesOf(candidates)) {
      if (test(this.items[i] as PreparedOccurrence)) {
        setBit(bits, i);
      }
    }
    return bits;
  }
}

function addAll(index: Map<string, number[]>, keys: Iterable<string>, i: number): void {
  for (const key of keys) {
    const list = index.get(key);
    if (list === undefined) {
      index.set(key, [i]);
    } else if (list[list.length - 1] !== i) {
      list.push(i);
    }
  }
}
