import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { CalgateError } from '@calgate/core';
import { childEnv, type PostgresBinaries, type PostgresLog, type RunAs } from './postgres-binaries.ts';

/** The port was taken between probing and binding. */
export class PortInUse extends Error {}

export interface RunningServer {
  stop(): Promise<void>;
  stopOnSignals(): void;
}

export interface LaunchOptions {
  binaries: PostgresBinaries;
  clusterDir: string;
  port: number;
  runAs: RunAs | undefined;
  log: PostgresLog;
  timeoutMs: number | undefined;
}

/** Starts the server in its own process group and resolves once it accepts connections. */
export async function launch(options: LaunchOptions): Promise<RunningServer> {
  const { log } = options;
  const child = spawn(
    options.binaries.postgres,
    [
      '-D',
      options.clusterDir,
      '-p',
      String(options.port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'lc_messages=C',
    ],
    // Its own process group: a Ctrl-C in the terminal reaches Calgate, which stops the server
    // after the gateway has drained, instead of the server vanishing under open requests.
    { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: childEnv(options.binaries), ...options.runAs },
  );
  const recent: string[] = [];
  let partial = '';
  const lines = (chunk: Buffer | string) => {
    const parts = (partial + chunk.toString()).split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) {
      if (line.trim() === '') {
        continue;
      }
      child.emit('line', line);
      recent.push(line);
      if (recent.length > 40) {
        recent.shift();
      }
      if (/\b(FATAL|PANIC):/.test(line)) {
        log.warn({ postgres: line }, 'embedded PostgreSQL');
      } else {
        log.debug({ postgres: line }, 'embedded PostgreSQL');
      }
    }
  };
  child.stdout.on('data', lines);
  child.stderr.on('data', lines);
  // Registered before the start watcher's, so a failure report sees the last line too.
  child.once('close', () => lines('\n'));

  await waitUntilReady(child, options, recent);
  return supervise(child, log);
}

function waitUntilReady(child: ChildProcess, options: LaunchOptions, recent: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const timeoutMs = options.timeoutMs ?? 120_000;
    const timer = setTimeout(() => {
      finish();
      child.kill('SIGQUIT');
      reject(
        new CalgateError(
          'unavailable',
          `Embedded PostgreSQL did not start within ${timeoutMs} ms:\n${recent.join('\n')}`,
        ),
      );
    }, timeoutMs);
    const onLine = (line: string) => {
      if (line.includes('database system is ready to accept connections')) {
        finish();
        resolve();
      }
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      finish();
      reject(startFailure(options.clusterDir, recent, code ?? signal));
    };
    const onError = (error: Error) => {
      finish();
      reject(error);
    };
    const finish = () => {
      clearTimeout(timer);
      child.off('line', onLine);
      child.off('close', onExit);
      child.off('error', onError);
    };
    child.on('line', onLine);
    // 'close', not 'exit': the output explaining a failed start must be read in full first.
    child.once('close', onExit);
    child.once('error', onError);
  });
}

function startFailure(clusterDir: string, recent: string[], status: number | string | null): Error {
  const output = recent.join('\n');
  const lock = /lock file "postmaster\.pid" already exists[\s\S]*?PID (\d+)/.exec(output);
  if (lock) {
    return new CalgateError(
      'unavailable',
      `The embedded PostgreSQL cluster in ${clusterDir} is already in use by process ${lock[1]} ` +
        '(another Calgate started with the same DATA_DIR?). Stop it, or use another DATA_DIR. ' +
        `If no such server runs, the lock is stale: remove ${join(clusterDir, 'postmaster.pid')}.`,
      { context: { pid: Number(lock[1]) } },
    );
  }
  if (/could not bind .*Address already in use|could not create any TCP\/IP sockets/.test(output)) {
    return new PortInUse('address already in use');
  }
  return new CalgateError('unavailable', `Embedded PostgreSQL exited during start (${status}):\n${output}`);
}

/** Owns a started server: an idempotent stop, and a last-resort SIGINT when the process exits. */
function supervise(child: ChildProcess, log: PostgresLog): RunningServer {
  let stopping: Promise<void> | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      if (stopping === undefined) {
        log.warn({ code, signal }, 'embedded PostgreSQL exited unexpectedly');
      }
      resolve();
    });
  });
  // Sending a signal is synchronous, so this works even inside process.exit().
  const onProcessExit = () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGINT');
    }
  };
  const onSignal = (signal: NodeJS.Signals) => {
    // Only when ours is the sole handler: otherwise the application owns the shutdown order.
    if (process.listenerCount(signal) > 1) {
      return;
    }
    void stop().finally(() => {
      process.kill(process.pid, signal);
    });
  };
  process.on('exit', onProcessExit);

  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGINT');
        const timer = setTimeout(() => child.kill('SIGQUIT'), 30_000);
        await exited;
        clearTimeout(timer);
      }
      process.off('exit', onProcessExit);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    })();
    return stopping;
  };
  return {
    stop,
    stopOnSignals() {
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
    },
  };
}
