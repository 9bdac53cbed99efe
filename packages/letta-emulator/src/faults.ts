/**
 * Scripted faults: "the next 2 messages.create calls to agent X answer 503", "answer 429 with
 * Retry-After: 3", "deliver the message but drop the response", "never answer".
 */

/** Which requests a fault applies to; every given field must match. */
export interface FaultMatch {
  /** Operation name(s): `agents.list`, `agents.retrieve`, `messages.create`, `health`, or `agents.*`. */
  op?: string | string[];
  /** The path's agent id. */
  agentId?: string;
  method?: string;
}

export type FaultAction =
  /** Answer with this status and Letta's `{detail}` body (detail defaults by status). */
  | { kind: 'error'; status: number; detail?: string; retryAfterSeconds?: number }
  /** Process the request (the message is recorded) and then destroy the connection. */
  | { kind: 'dropResponse' }
  /** Destroy the connection before processing (nothing is recorded but the request log entry). */
  | { kind: 'dropRequest' }
  /** Delay this request, then process it normally. */
  | { kind: 'latency'; ms: number }
  /** Never answer: the connection stays open until the client gives up or the emulator closes. */
  | { kind: 'hang' };

export interface ScriptedFault {
  match?: FaultMatch;
  /** How many matching requests it applies to (default 1). */
  times?: number;
  action: FaultAction;
}

export interface RequestFacts {
  op: string;
  method: string;
  agentId?: string;
}

export interface FaultDecision {
  delayMs: number;
  action?: Exclude<FaultAction, { kind: 'latency' }>;
}

function opMatches(pattern: string, op: string): boolean {
  return pattern === op || (pattern.endsWith('.*') && op.startsWith(pattern.slice(0, -1)));
}

export function matches(match: FaultMatch | undefined, facts: RequestFacts): boolean {
  if (!match) {
    return true;
  }
  const ops = match.op === undefined ? null : Array.isArray(match.op) ? match.op : [match.op];
  if (ops && !ops.some((p) => opMatches(p, facts.op))) {
    return false;
  }
  if (match.method !== undefined && match.method.toUpperCase() !== facts.method) {
    return false;
  }
  return match.agentId === undefined || match.agentId === facts.agentId;
}

export class Faults {
  scripted: (ScriptedFault & { remaining: number })[] = [];

  script(fault: ScriptedFault): void {
    const times = fault.times ?? 1;
    if (!Number.isInteger(times) || times < 1) {
      throw new Error(`A scripted fault's times must be a positive integer, not ${String(fault.times)}.`);
    }
    const { action } = fault;
    if (
      action.kind === 'error' &&
      (!Number.isInteger(action.status) || action.status < 400 || action.status > 599)
    ) {
      throw new Error(`A scripted error's status must be 400–599, not ${String(action.status)}.`);
    }
    if (action.kind === 'latency' && !(action.ms >= 0)) {
      throw new Error(`A scripted latency must be ≥ 0 ms, not ${String(action.ms)}.`);
    }
    this.scripted.push({ ...fault, remaining: times });
  }

  clear(): void {
    this.scripted = [];
  }

  /** Consumes the first matching faults: latencies add up, the first other action decides. */
  decide(facts: RequestFacts): FaultDecision {
    let delayMs = 0;
    let action: FaultDecision['action'];
    for (const fault of this.scripted) {
      if (fault.remaining > 0 && matches(fault.match, facts)) {
        fault.remaining -= 1;
        if (fault.action.kind === 'latency') {
          delayMs += fault.action.ms;
          continue;
        }
        action = fault.action;
        break;
      }
    }
    this.scripted = this.scripted.filter((f) => f.remaining > 0);
    return action ? { delayMs, action } : { delayMs };
  }
}
