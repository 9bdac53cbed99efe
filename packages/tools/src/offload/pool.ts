/**
 * Worker threads for the tools' CPU-bound pure work (recurrence expansion), so a key asking for
 * the heaviest answers it can does not hold the event loop that health checks and every other
 * key's calls need. Tasks queue first come, first served; a worker that dies is replaced and its
 * task fails with 'internal'. Workers are unref'd: they never keep the process alive.
 */
import { Worker } from 'node:worker_threads';
import { CalgateError, type ErrorCode } from '@calgate/core';
import type { TaskInput, TaskName, TaskOutput } from './tasks.ts';

interface Pending {
  id: number;
  task: TaskName;
  input: unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

interface Slot {
  worker: Worker;
  current: Pending | undefined;
}

export class CpuPool {
  readonly #size: number;
  readonly #slots: Slot[] = [];
  readonly #queue: Pending[] = [];
  #nextId = 0;
  #closed = false;

  constructor(size = 1) {
    this.#size = Math.max(1, size);
  }

  run<T extends TaskName>(task: T, input: TaskInput<T>): Promise<TaskOutput<T>> {
    if (this.#closed) {
      return Promise.reject(new CalgateError('unavailable', 'The gateway is shutting down; try again.'));
    }
    return new Promise((resolve, reject) => {
      this.#queue.push({
        id: this.#nextId++,
        task,
        input,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      this.#dispatch();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const pending of this.#queue.splice(0)) {
      pending.reject(new CalgateError('unavailable', 'The gateway is shutting down; try again.'));
    }
    await Promise.all(this.#slots.splice(0).map((slot) => slot.worker.terminate()));
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      let slot = this.#slots.find((candidate) => candidate.current === undefined);
      if (slot === undefined && this.#slots.length < this.#size) {
        slot = this.#spawn();
      }
      if (slot === undefined) {
        return;
      }
      const pending = this.#queue.shift() as Pending;
      slot.current = pending;
      slot.worker.ref();
      slot.worker.postMessage({ id: pending.id, task: pending.task, input: pending.input });
    }
  }

  #spawn(): Slot {
    // A task is bounded (10,000 instances); a small heap keeps the gateway's memory bounded too.
    const worker = new Worker(new URL('./worker.ts', import.meta.url), {
      resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 4 },
    });
    const slot: Slot = { worker, current: undefined };
    worker.unref();
    worker.on(
      'message',
      (message: { id: number; output?: unknown; error?: { code: ErrorCode; message: string } }) => {
        const pending = slot.current;
        if (pending === undefined || pending.id !== message.id) {
          return;
        }
        slot.current = undefined;
        worker.unref();
        if (message.error === undefined) {
          pending.resolve(message.output);
        } else {
          pending.reject(new CalgateError(message.error.code, message.error.message));
        }
        this.#dispatch();
      },
    );
    const lost = (reason: string) => {
      const index = this.#slots.indexOf(slot);
      if (index >= 0) {
        this.#slots.splice(index, 1);
      }
      slot.current?.reject(new CalgateError('internal', `A worker thread stopped: ${reason}.`));
      slot.current = undefined;
      if (!this.#closed) {
        this.#dispatch();
      }
    };
    worker.on('error', (error) => lost(error.message));
    worker.on('exit', (code) => lost(`exit code ${code}`));
    this.#slots.push(slot);
    return slot;
  }
}
