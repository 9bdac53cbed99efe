/**
 * Injected faults: latency, random error rates, and scripted failures ("the next 2 events.list
 * calls on calendar X answer 503", "the next insert succeeds but its response is dropped").
 * Randomness comes from a seeded generator so runs repeat.
 */

/** Which requests a rule applies to; every given field must match. */
export interface FaultMatch {
  /** Operation name(s): `events.list`, `events.*`, `oauth.token`, `freebusy.query` … */
  op?: string | string[];
  /** Path calendar id (`primary` also matches the caller's own email). */
  calendarId?: string;
  /** The calling account's email (from its bearer token). */
  account?: string;
  method?: string;
}

export type FaultAction =
  /** Answer with this status and Google's error body (reason defaults by status). */
  | { kind: 'error'; status: number; reason?: string; message?: string; retryAfterSeconds?: number }
  /** Process the request (state changes happen) and then destroy the connection. */
  | { kind: 'dropResponse' }
  /** Destroy the connection before processing (nothing changes). */
  | { kind: 'dropRequest' }
  /** Delay this request, then process it normally. */
  | { kind: 'latency'; ms: number };

export interface ScriptedFault {
  match: FaultMatch;
  /** How many matching requests it applies to (default 1). */
  times?: number;
  action: FaultAction;
}

export interface LatencyRule {
  ms: number;
  /** Adds a uniformly random 0…jitterMs. */
  jitterMs?: number;
  match?: FaultMatch;
}

export interface ErrorRateRule {
  /** Probability 0…1 that a matching request fails. */
  rate: number;
  status?: number;
  reason?: string;
  retryAfterSeconds?: number;
  match?: FaultMatch;
}

/**
 * A fault on outgoing push notifications (events.watch channels), so a client's polling
 * fallback can be exercised: `drop` loses the notification (its message number is still
 * used up, as when Google's delivery is lost), `delay` holds it back before sending.
 */
export interface NotificationFault {
  action: { kind: 'drop' } | { kind: 'delay'; ms: number };
  match?: { calendarId?: string; channelId?: string };
  /** How many notifications it applies to; unset = every matching one until cleared. */
  times?: number;
}

export interface RequestFacts {
  op: string;
  method: string;
  calendarId?: string;
  account?: string;
}

export interface FaultDecision {
  delayMs: number;
  action?: FaultAction;
}

function opMatches(pattern: string, op: string): boolean {
  const p = pattern.replace(/^calendar\./, '');
  return p === op || (p.endsWith('.*') && op.startsWith(p.slice(0, -1)));
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
  if (match.account !== undefined && match.account !== facts.account) {
    return false;
  }
  if (match.calendarId !== undefined) {
    const id = facts.calendarId === 'primary' ? facts.account : facts.calendarId;
    if (match.calendarId !== facts.calendarId && match.calendarId !== id) {
      return false;
    }
  }
  return true;
}

/** mulberry32: small, fast, and good enough for fault dice. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Faults {
  latency: LatencyRule[] = [];
  errorRates: ErrorRateRule[] = [];
  scripted: (ScriptedFault & { remaining: number })[] = [];
  notifications: (NotificationFault & { remaining: number })[] = [];
  #random: () => number;

  constructor(randomSeed = 1) {
    this.#random = seeded(randomSeed);
  }

  reseed(seed: number): void {
    this.#random = seeded(seed);
  }

  clear(): void {
    this.latency = [];
    this.errorRates = [];
    this.scripted = [];
    this.notifications = [];
  }

  addNotificationFault(fault: NotificationFault): void {
    this.notifications.push({ ...fault, remaining: fault.times ?? Number.POSITIVE_INFINITY });
  }

  /** The first matching notification fault, used up by one; undefined = deliver normally. */
  decideNotification(facts: {
    calendarId: string;
    channelId: string;
  }): NotificationFault['action'] | undefined {
    const fault = this.notifications.find(
      (f) =>
        f.remaining > 0 &&
        (f.match?.calendarId === undefined || f.match.calendarId === facts.calendarId) &&
        (f.match?.channelId === undefined || f.match.channelId === facts.channelId),
    );
    if (!fault) {
      return undefined;
    }
    fault.remaining -= 1;
    this.notifications = this.notifications.filter((f) => f.remaining > 0);
    return fault.action;
  }

  script(fault: ScriptedFault): void {
    this.scripted.push({ ...fault, remaining: fault.times ?? 1 });
  }

  decide(facts: RequestFacts): FaultDecision {
    let delayMs = 0;
    for (const rule of this.latency) {
      if (matches(rule.match, facts)) {
        delayMs += rule.ms + (rule.jitterMs ? this.#random() * rule.jitterMs : 0);
      }
    }
    let action: FaultAction | undefined;
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
    if (!action) {
      for (const rule of this.errorRates) {
        if (matches(rule.match, facts) && this.#random() < rule.rate) {
          action = {
            kind: 'error',
            status: rule.status ?? 503,
            ...(rule.reason === undefined ? {} : { reason: rule.reason }),
            ...(rule.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: rule.retryAfterSeconds }),
          };
          break;
        }
      }
    }
    return action ? { delayMs, action } : { delayMs };
  }
}
