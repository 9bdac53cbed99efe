import { CalgateError } from '@calgate/core';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import { createRuntime, type Runtime, type RuntimeOptions } from './runtime.ts';

export interface RunningGateway {
  app: FastifyInstance;
  runtime: Runtime;
  url: string;
  close(): Promise<void>;
}

/** Builds the runtime and the app, listens, and returns a handle that shuts both down in order. */
export async function serve(
  config: Config,
  log: Logger,
  options: RuntimeOptions = {},
): Promise<RunningGateway> {
  const runtime = await createRuntime(config, log, options);
  const app = buildApp(runtime.deps);
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await app.close().catch(() => {});
    await runtime.close();
    throw (error as NodeJS.ErrnoException).code === 'EADDRINUSE'
      ? new CalgateError('unavailable', portInUseMessage(config.host, config.port), { cause: error })
      : error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  log.info({ url, publicUrl: config.publicUrl, embedded: runtime.embedded }, 'calgate listening');
  let closing: Promise<void> | undefined;
  return {
    app,
    runtime,
    url,
    close() {
      closing ??= (async () => {
        // In-flight requests get a grace period; a connection a client left half-open (or one it
        // opened and never used) must not hold the shutdown up for ever.
        const force = setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_GRACE_MS);
        await app.close().finally(() => clearTimeout(force));
        await runtime.close();
      })();
      return closing;
    },
  };
}

/** The one line `calgate serve`/`start` prints when another process holds the port. */
export function portInUseMessage(host: string, port: number): string {
  return `Port ${port} on ${host} is in use: stop the other process or set PORT.`;
}

/**
 * Printed at start while no dashboard account exists: sign-up is open to whoever comes first, so
 * the operator should be that person (or keep the port private until then).
 */
export async function ownerBanner(gateway: RunningGateway, publicUrl: string): Promise<string | undefined> {
  if (await gateway.runtime.deps.dashboard.users.hasUsers()) {
    return undefined;
  }
  return [
    '',
    `Dashboard: ${publicUrl}/`,
    'No account exists yet: the first person to sign up on the dashboard becomes its owner.',
    'Open it now and create the owner account before anyone else can reach it.',
    '',
  ].join('\n');
}

/** How long a shutdown waits for requests still being answered. */
const SHUTDOWN_GRACE_MS = 2_000;

/** Closes cleanly on SIGINT/SIGTERM; a second signal exits at once. */
export function closeOnSignals(gateway: { close(): Promise<void> }, log: Logger): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, 'shutting down');
    gateway.close().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
