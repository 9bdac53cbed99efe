import { type ChildProcess, spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export interface Started {
  child: ChildProcess;
  output: () => string;
}

/** `npm start` as a user runs it: no DATABASE_URL, no REDIS_URL, only DATA_DIR and a port. */
export async function npmStart(
  dataDir: string,
  port: number,
  /** More environment, e.g. TZ for the machine's zone. */
  extra: Record<string, string> = {},
): Promise<Started> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATA_DIR: dataDir,
    PORT: String(port),
    LOG_LEVEL: 'warn',
    ...extra,
  };
  const child = spawn('npm', ['start'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout?.on('data', (chunk) => (out += String(chunk)));
  child.stderr?.on('data', (chunk) => (out += String(chunk)));
  const deadline = Date.now() + 60_000;
  while (!/Calgate is running/.test(out)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`npm start did not come up:\n${out}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // The welcome text is written in one piece after the server listens.
  await new Promise((resolve) => setTimeout(resolve, 100));
  return { child, output: () => out };
}

/** SIGTERM to the whole process group, then wait until the embedded Postgres has shut down too. */
export async function stop(started: Started, dataDir: string): Promise<void> {
  const exited = new Promise((resolve) => started.child.once('exit', resolve));
  process.kill(-(started.child.pid ?? 0), 'SIGTERM');
  await exited;
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    try {
      await stat(join(dataDir, 'postgres', 'postmaster.pid'));
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the embedded PostgreSQL did not shut down');
}
