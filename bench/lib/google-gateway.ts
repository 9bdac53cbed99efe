import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { GoogleEmulator } from '@calgate/google-emulator';
import { loadConfig } from '../../apps/gateway/src/config.ts';
import { createLogger } from '../../apps/gateway/src/logger.ts';
import { type RunningGateway, serve } from '../../apps/gateway/src/serve.ts';

/** The OAuth client the in-process benchmark gateways sign in to the emulator as. */
export const BENCH_OAUTH_CLIENT = {
  clientId: 'bench.apps.googleusercontent.com',
  clientSecret: 'bench-secret',
};

/**
 * Settings of an in-process gateway on a free loopback port, pointed at the emulator as
 * BENCH_OAUTH_CLIENT, with rate limits out of the way and quiet logs.
 */
export function benchGatewayEnv(emulator: GoogleEmulator, databaseUrl: string): Record<string, string> {
  return {
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    GOOGLE_CLIENT_ID: BENCH_OAUTH_CLIENT.clientId,
    GOOGLE_CLIENT_SECRET: BENCH_OAUTH_CLIENT.clientSecret,
    GOOGLE_API_ROOT_URL: `${emulator.url}/`,
    GOOGLE_OAUTH_URL: emulator.url,
    // The emulator listens on loopback: an API root there needs this.
    OUTBOUND_ALLOW_PRIVATE: 'true',
    RATE_LIMIT_PER_MINUTE: '100000000',
    RATE_LIMIT_BURST: '1000000',
    LOG_LEVEL: 'warn',
  };
}

/** Starts `calgate serve` in this process with those settings (and `env` over them), logging nothing. */
export function serveBenchGateway(env: Record<string, string>): Promise<RunningGateway> {
  return serve(loadConfig(env), createLogger('warn', new Writable({ write: (_c, _e, done) => done() })));
}
