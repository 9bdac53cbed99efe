/**
 * CPU-bound tool calls (recurrence expansion) take turns: one at a time in the process, each
 * started on a fresh turn of the event loop, and after a turn that kept the thread busy for
 * d ms the next one waits d ms (at most MAX_PAUSE_MS). So however many heavy calls one key
 * sends, they get at most about half of the event loop, and health checks and other keys'
 * calls are answered in between; without turns, every heavy call queued in one loop iteration
 * would run back to back first.
 */
const MAX_PAUSE_MS = 250;

export class CpuTurns {
  #busy = false;
  readonly #waiting: (() => void)[] = [];

  /** Resolves with the release once it is this caller's turn. */
  async acquire(): Promise<() => void> {
    if (this.#busy) {
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#busy = true;
      // Even the first turn starts after I/O that is already waiting has been served.
      await new Promise((resolve) => setImmediate(resolve));
    }
    const started = performance.now();
    let released = false;
    return () => {
      if (released) {
        return;
      }
      released = true;
      const next = this.#waiting.shift();
      if (next === undefined) {
        this.#busy = false;
        return;
      }
      setTimeout(next, Math.min(MAX_PAUSE_MS, performance.now() - started));
    };
  }
}

/** How long a slice of pure work may hold the event loop before it lets other work run. */
const SLICE_MS = 8;

/**
 * `items.map(work)` in slices of at most ~8 ms, yielding to the event loop between them: rule
 * evaluation over 10,000 occurrences then never holds health checks and other keys' calls for
 * longer than a slice.
 */
export async function mapInSlices<T, U>(items: readonly T[], work: (item: T) => U): Promise<U[]> {
  const out: U[] = [];
  let sliceStart = performance.now();
  for (const item of items) {
    out.push(work(item));
    if (performance.now() - sliceStart > SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
  }
  return out;
}
