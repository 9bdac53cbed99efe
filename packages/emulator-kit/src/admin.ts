/**
 * The fault and request-log half of every emulator's admin surface, in-process and over HTTP
 * (`/__admin/faults…`, `/__admin/requests`). Seeding and state stay each emulator's own.
 */
import {
  checkScripted,
  type ErrorRateRuleOf,
  type FaultAction,
  type FaultTable,
  type LatencyRuleOf,
  type ScriptedFaultOf,
} from './faults.ts';
import type { Reply } from './reply.ts';
import type { KitRoute } from './router.ts';

export interface FaultAdmin<M, X, E> {
  /** Queues a fault; faults apply in the order scripted. */
  script(fault: ScriptedFaultOf<M, FaultAction<X>>): void;
  /** Shorthand: the next `times` matching requests get `action`. */
  fail(match: M, action: FaultAction<X>, times?: number): void;
  /** Replaces the latency rules with this one (null: none). */
  setLatency(rule: LatencyRuleOf<M> | null): void;
  addErrorRate(rule: ErrorRateRuleOf<M, X>): void;
  clearFaults(): void;
  /** Scripted faults not yet used up. */
  pendingFaults(): ScriptedFaultOf<M, FaultAction<X>>[];
  /** Every logged request, oldest first; only those matching `match` when given. */
  requests(match?: M): E[];
  clearRequests(): void;
}

export interface FaultAdminDeps<M, F, X, E> {
  faults: FaultTable<M, F, X>;
  log: E[];
  /** The facts a log entry stands for, to filter it with a fault match. */
  facts: (entry: E) => F;
  /** Check scripted faults (positive times, 4xx/5xx statuses) and throw on nonsense. */
  strict?: boolean;
}

export function faultAdmin<M, F, X, E>(deps: FaultAdminDeps<M, F, X, E>): FaultAdmin<M, X, E> {
  const { faults, log } = deps;
  const script = (fault: ScriptedFaultOf<M, FaultAction<X>>) => {
    if (deps.strict) {
      checkScripted(fault);
    }
    faults.script(fault);
  };
  return {
    script,
    fail: (match, action, times = 1) => script({ match, action, times }),
    setLatency(rule) {
      faults.latency = rule === null ? [] : [rule];
    },
    addErrorRate(rule) {
      faults.errorRates.push(rule);
    },
    clearFaults: () => faults.clear(),
    pendingFaults: () => faults.pending(),
    requests: (match) =>
      match === undefined ? [...log] : log.filter((entry) => faults.matches(match, deps.facts(entry))),
    clearRequests: () => {
      log.length = 0;
    },
  };
}

/** The context admin routes read: a parsed JSON object body and the query. */
export interface AdminContext {
  body: Record<string, unknown>;
  query: URLSearchParams;
}

const noContent = (): Reply => ({ status: 204 });
const json = (body: unknown): Reply => ({ status: 200, body });

/**
 * `POST /faults/script|latency|error-rate`, `DELETE /faults`, `GET|DELETE /requests` under
 * `prefix`, with ops `admin.script`, `admin.latency`, `admin.errorRate`, `admin.clearFaults`,
 * `admin.requests`, `admin.clearRequests`.
 */
export function faultAdminRoutes<M, X, E, C extends AdminContext>(
  admin: Pick<
    FaultAdmin<M, X, E>,
    'setLatency' | 'addErrorRate' | 'script' | 'clearFaults' | 'requests' | 'clearRequests'
  >,
  prefix = '/__admin',
): KitRoute<C>[] {
  const route = (method: string, pattern: string, op: string, handler: (ctx: C) => Reply): KitRoute<C> => ({
    method,
    pattern: `${prefix}${pattern}`,
    op: `admin.${op}`,
    handler,
  });
  return [
    route('POST', '/faults/latency', 'latency', (ctx) => {
      admin.setLatency(ctx.body.ms === undefined ? null : (ctx.body as unknown as LatencyRuleOf<M>));
      return noContent();
    }),
    route('POST', '/faults/error-rate', 'errorRate', (ctx) => {
      admin.addErrorRate(ctx.body as unknown as ErrorRateRuleOf<M, X>);
      return noContent();
    }),
    route('POST', '/faults/script', 'script', (ctx) => {
      admin.script(ctx.body as unknown as ScriptedFaultOf<M, FaultAction<X>>);
      return noContent();
    }),
    route('DELETE', '/faults', 'clearFaults', () => {
      admin.clearFaults();
      return noContent();
    }),
    route('GET', '/requests', 'requests', () => json({ items: admin.requests() })),
    route('DELETE', '/requests', 'clearRequests', () => {
      admin.clearRequests();
      return noContent();
    }),
  ];
}
