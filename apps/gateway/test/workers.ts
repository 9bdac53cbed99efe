import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { until } from '@calgate/testkit';

const BIN = fileURLToPath(new URL('../src/bin/calgate.ts', import.meta.url));

/**
 * Starts a real `calgate worker` with `env` (PATH, WORKER_PORT=0, LOG_LEVEL=info and
 * MIGRATE_ON_START=false under it) and resolves once it says it is running; a worker that does
 * not start fails with what it printed. `running` holds it until it exits; `onStdout` sees its
 * output as it comes.
 */
export function startWorker(
  env: Record<string, string | undefined>,
  running: Set<ChildProcess>,
  onStdout?: (chunk: string) => void,
): Promise<ChildProcess> {
  const child = spawn(process.execPath, [BIN, 'worker'], {
    env: { PATH: process.env.PATH, WORKER_PORT: '0', LOG_LEVEL: 'info', MIGRATE_ON_START: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let out = '';
  child.stdout?.on('data', (chunk) => {
    out += String(chunk);
    onStdout?.(String(chunk));
  });
  child.stderr?.on('data', (chunk) => (out += String(chunk)));
  return until(() => out.includes('calgate worker running'), 30_000).then(
    () => child,
    (error: unknown) => {
      throw new Error(`${String(error)}\n${out}`);
    },
  );
}
