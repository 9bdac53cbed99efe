/**
 * @calgate/letta-emulator — an in-memory HTTP emulator of the Letta API routes Calgate uses
 * (list and retrieve agents, send a message) for tests. Point the official client at it with
 * `new Letta({ baseURL: emulator.url, apiKey })`; seed it with API keys and agents, read what
 * agents received and script faults through `emulator.admin`.
 */
export type { LettaEmulatorAdmin, SeededAgent } from './admin.ts';
export {
  EMULATED_VERSION,
  type LettaEmulator,
  type LettaEmulatorOptions,
  startLettaEmulator,
} from './emulator.ts';
export type { FaultAction, FaultMatch, ScriptedFault } from './faults.ts';
export { DEFAULT_ORGANIZATION, type LettaSeed, type SeedAgent, type SeedApiKey } from './seed.ts';
export type { RequestLogEntry } from './server.ts';
export type { ReceivedMessage } from './state.ts';
