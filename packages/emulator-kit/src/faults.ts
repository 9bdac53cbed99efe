/**
 * Fault scripting shared by the emulators: scripted faults ("the next 2 events.list calls
 * answer 503"), latency rules and seeded error rates. What a rule matches is the emulator's
 * own (`match(rule, facts)`); what an injected error looks like is the emulator's too.
 */

/** The error an emulator injects: its status plus whatever its error shape needs. */
export type ErrorAction<X> = { kind: 'error'; status: number; retryAfterSeconds?: number } & X;

export type FaultAction<X = object> =
  /** Answer with this status and the emulator's error body. */
  | ErrorAction<X>
  /** Process the request (state changes happen) and then destroy the connection. */
  | { kind: 'dropResponse' }
  /** Destroy the connection before processing (nothing changes). */
  | { kind: 'dropRequest' }
  /** Delay this request, then process it normally. */
  | { kind: 'latency'; ms: number }
  /** Never answer: the connection stays open until the client gives up or the emulator closes. */
  | { kind: 'hang' };

export interface ScriptedFaultOf<M, A> {
  match?: M;
  /** How many matching requests it applies to (default 1). */
  times?: number;
  action: A;
}

export interface LatencyRuleOf<M> {
  ms: number;
  /** Adds a uniformly random 0…jitterMs. */
  jitterMs?: number;
  match?: M;
}

/** `{rate, status?, match?, …}`: the rest of the rule (reason, code …) goes into the error. */
export type ErrorRateRuleOf<M, X> = {
  /** Probability 0…1 that a matching request fails. */
  rate: number;
  status?: number;
  retryAfterSeconds?: number;
  match?: M;
} & X;

export interface FaultDecisionOf<A> {
  delayMs: number;
  action?: Exclude<A, { kind: 'latency' }>;
}

/** `events.list` matches `events.list` and `events.*`. */
export function opMatches(pattern: string, op: string): boolean {
  return pattern === op || (pattern.endsWith('.*') && op.startsWith(pattern.slice(0, -1)));
}

/** Whether `op` (one pattern or several; unset = any) matches. */
export function opsMatch(patterns: string | string[] | undefined, op: string, normalize = (p: string) => p) {
  if (patterns === undefined) {
    return true;
  }
  return (Array.isArray(patterns) ? patterns : [patterns]).some((p) => opMatches(normalize(p), op));
}

/** mulberry32: small, fast, and good enough for fault dice. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Throws when a scripted fault could never apply or makes no sense. */
export function checkScripted(fault: { times?: number; action: { kind: string } }): void {
  const times = fault.times ?? 1;
  if (!Number.isInteger(times) || times < 1) {
    throw new Error(`A scripted fault's times must be a positive integer, not ${String(fault.times)}.`);
  }
  const action = fault.action as { kind: string; status?: unknown; ms?: unknown };
  if (
    action.kind === 'error' &&
    (!Number.isInteger(action.status) || Number(action.status) < 400 || Number(action.status) > 599)
  ) {
    throw new Error(`A scripted error's status must be 400–599, not ${String(action.status)}.`);
  }
  if (action.kind === 'latency' && !(Number(action.ms) >= 0)) {
    throw new Error(`A scripted latency must be ≥ 0 ms, not ${String(action.ms)}.`);
  }
}

/**
 * The fault table of one emulator. `M` is its match shape, `F` the facts of one request,
 * `X` the extra fields of its injected errors.
 */
export class FaultTable<M, F, X = object> {
  latency: LatencyRuleOf<M>[] = [];
  errorRates: ErrorRateRuleOf<M, X>[] = [];
  scripted: (ScriptedFaultOf<M, FaultAction<X>> & { remaining: number })[] = [];
  readonly #matches: (match: M | undefined, facts: F) => boolean;
  #random: () => number;

  constructor(matches: (match: M | undefined, facts: F) => boolean, randomSeed = 1) {
    this.#matches = matches;
    this.#random = seededRandom(randomSeed);
  }

  matches(match: M | undefined, facts: F): boolean {
    return this.#matches(match, facts);
  }

  reseed(seed: number): void {
    this.#random = seededRandom(seed);
  }

  script(fault: ScriptedFaultOf<M, FaultAction<X>>): void {
    this.scripted.push({ ...fault, remaining: fault.times ?? 1 });
  }

  clear(): void {
    this.latency = [];
    this.errorRates = [];
    this.scripted = [];
  }

  /** Scripted faults not yet used up, with the uses left as `times`. */
  pending(): ScriptedFaultOf<M, FaultAction<X>>[] {
    return this.scripted.map(({ remaining, ...f }) => ({ ...f, times: remaining }));
  }

  /**
   * Latency rules add up; then the first matching scripted fault decides (scripted latencies
   * add up and let the next one decide); failing that, an error rate may roll an error.
   */
  decide(facts: F): FaultDecisionOf<FaultAction<X>> {
    let delayMs = 0;
    for (const rule of this.latency) {
      if (this.#matches(rule.match, facts)) {
        delayMs += rule.ms + (rule.jitterMs ? this.#random() * rule.jitterMs : 0);
      }
    }
    let action: Exclude<FaultAction<X>, { kind: 'latency' }> | undefined;
    for (const fault of this.scripted) {
      if (fault.remaining > 0 && this.#matches(fault.match, facts)) {
        fault.remaining -= 1;
        if (fault.action.kind === 'latency') {
          delayMs += (fault.action as { ms: number }).ms;
          continue;
        }
        action = fault.action as Exclude<FaultAction<X>, { kind: 'latency' }>;
        break;
      }
    }
    this.scripted = this.scripted.filter((f) => f.remaining > 0);
    if (!action) {
      for (const rule of this.errorRates) {
        if (this.#matches(rule.match, facts) && this.#random() < rule.rate) {
          const { rate: _rate, match: _match, status, ...rest } = rule;
          action = { ...rest, kind: 'error', status: status ?? 503 } as unknown as Exclude<
            FaultAction<X>,
            { kind: 'latency' }
          >;
          break;
        }
      }
    }
    return action ? { delayMs, action } : { delayMs };
  }
}
