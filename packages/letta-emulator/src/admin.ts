/**
 * The admin surface, in-process (`emulator.admin`): seeding, reset, the messages agents
 * received, the request log, and scripted faults.
 */
import { faultAdmin } from '@calgate/emulator-kit';
import type { FaultAction, FaultMatch, Faults, ScriptedFault } from './faults.ts';
import { applySeed, type LettaSeed } from './seed.ts';
import type { RequestLogEntry } from './server.ts';
import type { LettaState, ReceivedMessage } from './state.ts';

export interface SeededAgent {
  id: string;
  name: string;
  organization: string;
  created_at: string;
}

export interface LettaEmulatorAdmin {
  /** Adds API keys and agents; returns the agents added (with generated ids). */
  seed(seed: LettaSeed): SeededAgent[];
  /** Drops all state, faults and logs, then applies `seed` (default: the start seed). */
  reset(seed?: LettaSeed): void;
  agents(): SeededAgent[];
  /** Messages agents received, oldest first; only one agent's when `agentId` is given. */
  messages(agentId?: string): ReceivedMessage[];
  /** Every request, oldest first (faulted, unauthorized and malformed ones included). */
  requests(match?: FaultMatch): RequestLogEntry[];
  clearRequests(): void;
  /** Queues a fault; faults apply in the order scripted. */
  script(fault: ScriptedFault): void;
  /** Shorthand: the next `times` matching requests fail with `action`. */
  fail(match: FaultMatch, action: FaultAction, times?: number): void;
  clearFaults(): void;
  /** Scripted faults not yet used up. */
  pendingFaults(): ScriptedFault[];
}

export interface AdminDeps {
  state: LettaState;
  faults: Faults;
  log: RequestLogEntry[];
  initialSeed: LettaSeed;
}

export function createAdmin(deps: AdminDeps): LettaEmulatorAdmin {
  const { state, faults, log } = deps;
  const view = (a: { id: string; name: string; organization: string; createdAt: string }): SeededAgent => ({
    id: a.id,
    name: a.name,
    organization: a.organization,
    created_at: a.createdAt,
  });
  const kit = faultAdmin({
    faults,
    log,
    strict: true,
    facts: (r: RequestLogEntry) => ({
      op: r.op,
      method: r.method,
      ...(r.agentId ? { agentId: r.agentId } : {}),
    }),
  });
  return {
    seed: (seed) => applySeed(state, seed).map(view),
    reset(seed = deps.initialSeed) {
      state.clear();
      faults.clear();
      log.length = 0;
      applySeed(state, seed);
    },
    agents: () => [...state.agents.values()].map(view),
    messages: (agentId) =>
      state.received.filter((m) => agentId === undefined || m.agentId === agentId).map((m) => ({ ...m })),
    requests: kit.requests,
    clearRequests: kit.clearRequests,
    script: kit.script,
    fail: kit.fail,
    clearFaults: kit.clearFaults,
    pendingFaults: kit.pendingFaults,
  };
}
