/** Fault rules for the Graph emulator: the kit's table, matched on op, mailbox, calendar and method. */
import {
  type ErrorRateRuleOf,
  FaultTable,
  type FaultAction as KitFaultAction,
  type LatencyRuleOf,
  opsMatch,
  type ScriptedFaultOf,
} from '@calgate/emulator-kit';

export interface FaultMatch {
  /** `calendarView.list`, `calendarView.delta`, `events.*`, `oauth.token`, `calendars.list` … */
  op?: string | string[];
  /** The calling mailbox (lower-case address). */
  mailbox?: string;
  calendarId?: string;
  method?: string;
}

export interface RequestFacts {
  op: string;
  method: string;
  mailbox?: string;
  calendarId?: string;
}

/** Extra fields of an injected error: Graph's `code` and `message` (defaults by status). */
export interface ErrorFields {
  code?: string;
  message?: string;
}

export type FaultAction = KitFaultAction<ErrorFields>;
export type ScriptedFault = ScriptedFaultOf<FaultMatch, FaultAction>;
export type LatencyRule = LatencyRuleOf<FaultMatch>;
export type ErrorRateRule = ErrorRateRuleOf<FaultMatch, ErrorFields>;

export function matches(match: FaultMatch | undefined, facts: RequestFacts): boolean {
  if (!match) {
    return true;
  }
  return (
    opsMatch(match.op, facts.op) &&
    (match.method === undefined || match.method.toUpperCase() === facts.method) &&
    (match.mailbox === undefined || match.mailbox.toLowerCase() === facts.mailbox) &&
    (match.calendarId === undefined || match.calendarId === facts.calendarId)
  );
}

export class Faults extends FaultTable<FaultMatch, RequestFacts, ErrorFields> {
  constructor(randomSeed = 1) {
    super(matches, randomSeed);
  }
}
