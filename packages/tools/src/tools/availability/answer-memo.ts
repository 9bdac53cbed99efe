/**
 * Availability answers made again from the very same busy time are the same answer: a mirror's
 * free/busy is shared per calendar version (frozen intervals, the same object for every call
 * while the calendar's version holds), so an answer built from such intervals alone (no booking
 * added, no calendar unknown), for the same window, zone and options, is kept and given again
 * as the same object. Its JSON and text are then made once (jsonOf and formatText remember them
 * per object) instead of per call. Inputs are told apart by the identity of the shared intervals,
 * never by their contents, so a calendar that changed (a new version: new intervals) never meets
 * an answer made before. Nothing else (a local calendar, an upstream answer) is kept.
 */

/** Numbers for shared interval arrays: an array gone from memory never returns, nor does its number. */
const ids = new WeakMap<object, number>();
let nextId = 0;

function idOf(shared: object): number {
  let id = ids.get(shared);
  if (id === undefined) {
    nextId += 1;
    id = nextId;
    ids.set(shared, id);
  }
  return id;
}

/** Whether a free/busy answer's intervals are shared between calls (see the module comment). */
export function sharedIntervals(intervals: unknown): intervals is readonly object[] {
  return Array.isArray(intervals) && Object.isFrozen(intervals);
}

/** Answers kept (each some tens of kB with its JSON and text at most). */
const MAX_ANSWERS = 256;

export class AnswerMemo<T extends object> {
  readonly #answers = new Map<string, T>();

  /**
   * The key of an answer made from `shared` (each calendar's shared intervals, in the answer's
   * order) and `rest` (everything else it depends on, as text).
   */
  static key(shared: readonly (readonly [string, object])[], rest: string): string {
    let key = rest;
    for (const [calendarId, intervals] of shared) {
      key += `\u0000${calendarId}\u0000${idOf(intervals)}`;
    }
    return key;
  }

  get(key: string): T | undefined {
    return this.#answers.get(key);
  }

  set(key: string, answer: T): void {
    this.#answers.delete(key);
    this.#answers.set(key, answer);
    if (this.#answers.size > MAX_ANSWERS) {
      const oldest = this.#answers.keys().next();
      if (oldest.done !== true) {
        this.#answers.delete(oldest.value);
      }
    }
  }
}
