/**
 * startLettaEmulator: wires state, faults and routes into one node:http server on loopback.
 */
import { listen } from '@calgate/emulator-kit';
import { createAdmin, type LettaEmulatorAdmin } from './admin.ts';
import { agentRoutes } from './agents.ts';
import { Faults } from './faults.ts';
import { json, Router } from './http.ts';
import { messageRoutes } from './messages.ts';
import { applySeed, type LettaSeed } from './seed.ts';
import { createPipeline, type RequestLogEntry } from './server.ts';
import { LettaState } from './state.ts';

/** The Letta server version `GET /v1/health/` reports. */
export const EMULATED_VERSION = '0.16.1';

export interface LettaEmulatorOptions {
  seed?: LettaSeed;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Epoch milliseconds; default `Date.now`. */
  now?: () => number;
}

export interface LettaEmulator {
  /** Base URL without a trailing slash: `new Letta({ baseURL: url, apiKey })`. */
  url: string;
  admin: LettaEmulatorAdmin;
  /** Stops listening and cuts open connections (hanging requests included). */
  close(): Promise<void>;
}

export async function startLettaEmulator(options: LettaEmulatorOptions = {}): Promise<LettaEmulator> {
  const state = new LettaState(options.now ?? (() => Date.now()));
  const faults = new Faults();
  const log: RequestLogEntry[] = [];
  const initialSeed = options.seed ?? {};
  applySeed(state, initialSeed);
  const admin = createAdmin({ state, faults, log, initialSeed });
  const router = new Router();
  router.add([
    {
      method: 'GET',
      pattern: '/v1/health/',
      op: 'health',
      public: true,
      handler: () => json({ version: EMULATED_VERSION, status: 'ok' }),
    },
    ...agentRoutes(state),
    ...messageRoutes(state),
  ]);
  const server = await listen((closing) => createPipeline({ router, faults, state, log, closing }), {
    port: options.port,
    host: options.host,
  });
  return { url: server.url, admin, close: () => server.close() };
}
