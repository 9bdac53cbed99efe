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
