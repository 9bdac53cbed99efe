/**
 * Injected faults: latency, random error rates, and scripted failures ("the next 2 events.list
 * calls on calendar X answer 503", "the next insert succeeds but its response is dropped").
 * Randomness comes from a seeded generator so runs repeat. The fault table is the emulator
 * kit's; what a rule matches, and push-notification faults, are Google's.
 */
import {
  type ErrorRateRuleOf,
  type FaultDecisionOf,
  FaultTable,
  type FaultAction as KitFaultAction,
  type LatencyRuleOf,
  opsMatch,
  type ScriptedFaultOf,
} from '@calgate/emulator-kit';

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

/** An injected error answers with Google's error body (reason and message default by status). */
export type FaultAction = KitFaultAction<{ reason?: string; message?: string }>;

export type ScriptedFault = ScriptedFaultOf<FaultMatch, FaultAction>;

export type LatencyRule = LatencyRuleOf<FaultMatch>;

export type ErrorRateRule = ErrorRateRuleOf<FaultMatch, { reason?: string }>;

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

export type FaultDecision = FaultDecisionOf<FaultAction>;

export function matches(match: FaultMatch | undefined, facts: RequestFacts): boolean {
  if (!match) {
    return true;
  }
  if (!opsMatch(match.op, facts.op, (p) => p.replace(/^calendar\./, ''))) {
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

export class Faults extends FaultTable<FaultMatch, RequestFacts, { reason?: string; message?: string }> {
  notifications: (NotificationFault & { remaining: number })[] = [];

  constructor(randomSeed = 1) {
    super(matches, randomSeed);
  }

  override clear(): void {
    super.clear();
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
}
