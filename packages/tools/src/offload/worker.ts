/** A worker thread of the CpuPool: runs one task at a time and answers with its result or error. */
import { parentPort } from 'node:worker_threads';
import { CalgateError } from '@calgate/core';
import { TASKS, type TaskName } from './tasks.ts';

parentPort?.on('message', (message: { id: number; task: TaskName; input: never }) => {
  try {
    const output = TASKS[message.task](message.input);
    parentPort?.postMessage({ id: message.id, output });
  } catch (error) {
    const known = error instanceof CalgateError;
    parentPort?.postMessage({
      id: message.id,
      error: {
        code: known ? error.code : 'internal',
        message: known ? error.message : String(error instanceof Error ? error.message : error),
      },
    });
  }
});
