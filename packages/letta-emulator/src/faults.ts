/**
 * Scripted faults: "the next 2 messages.create calls to agent X answer 503", "answer 429 with
 * Retry-After: 3", "deliver the message but drop the response", "never answer". The table and
 * its rules are the emulator kit's; what a fault matches is Letta's.
 */
import {
  type FaultDecisionOf,
  FaultTable,
  type FaultAction as KitFaultAction,
  opsMatch,
  type ScriptedFaultOf,
} from '@calgate/emulator-kit';

/** Which requests a fault applies to; every given field must match. */
export interface FaultMatch {
  /** Operation name(s): `agents.list`, `agents.retrieve`, `messages.create`, `health`, or `agents.*`. */
  op?: string | string[];
  /** The path's agent id. */
  agentId?: string;
  method?: string;
}

/** An injected error answers with Letta's `{detail}` body (detail defaults by status). */
export type FaultAction = KitFaultAction<{ detail?: string }>;

export type ScriptedFault = ScriptedFaultOf<FaultMatch, FaultAction>;

export interface RequestFacts {
  op: string;
  method: string;
  agentId?: string;
}

export type FaultDecision = FaultDecisionOf<FaultAction>;

export function matches(match: FaultMatch | undefined, facts: RequestFacts): boolean {
  if (!match) {
    return true;
  }
  if (!opsMatch(match.op, facts.op)) {
    return false;
  }
  if (match.method !== undefined && match.method.toUpperCase() !== facts.method) {
    return false;
  }
  return match.agentId === undefined || match.agentId === facts.agentId;
}

export class Faults extends FaultTable<FaultMatch, RequestFacts, { detail?: string }> {
  constructor() {
    super(matches);
  }
}
