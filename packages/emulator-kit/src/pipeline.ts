/**
 * The request pipeline every emulator runs: route → body → scripted faults (latency, errors,
 * dropped or hanging connections) → handler → reply, with every call written to a request log.
 * What differs between emulators (error shapes, bodies, what a log entry holds, auth) comes in
 * as hooks.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FaultAction, FaultDecisionOf } from './faults.ts';
import type { Reply } from './reply.ts';
import type { Match, Router } from './router.ts';

/** What every request log entry holds; emulators add their own fields. */
export interface BaseLogEntry {
  /** Epoch milliseconds on the emulator's clock. */
  at: number;
  method: string;
  path: string;
  op: string;
  /** 0 when no response was sent (dropped or hanging connection). */
  status: number;
  /** Set when a scripted fault decided the outcome. */
  fault?: string;
}

export interface RequestInfo<R> {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  method: string;
  path: string;
  match: Match<R>;
}

export interface HandlerInput<R, E, B> {
  req: IncomingMessage;
  url: URL;
  method: string;
  path: string;
  route: R;
  params: Record<string, string>;
  body: B;
  entry: E;
}

export interface PipelineHooks<R, E extends BaseLogEntry, B, X> {
  router: Router<R & { method: string; pattern: string }>;
  log: E[];
  /** Oldest entries go past this many (default 20,000). */
  logLimit?: number;
  /** Aborted when the emulator closes, releasing delayed and hanging requests. */
  closing: AbortSignal;
  /** The log entry of a request (op `unknown` or similar when it matched no route). */
  entry(info: RequestInfo<R>): E;
  /** The reply to a request no route takes; `log: false` leaves it out of the request log. */
  unrouted(info: RequestInfo<R>): { reply: Reply; log: boolean };
  /** The parsed body (called for methods other than GET and HEAD). */
  readBody(req: IncomingMessage, entry: E): Promise<B>;
  /** The body GET and HEAD requests get. */
  emptyBody: () => B;
  /** Faults for this request; undefined skips fault injection (admin routes). */
  decide(entry: E, route: R): FaultDecisionOf<FaultAction<X>> | undefined;
  /** The reply an injected error gets. */
  faultReply(action: Extract<FaultAction<X>, { kind: 'error' }>, entry: E): Reply;
  /** Runs the route (authentication included). */
  handle(input: HandlerInput<R, E, B>): Reply | Promise<Reply>;
  /** Maps anything thrown to the emulator's error shape. */
  errorReply(error: unknown): Reply;
  /** Writes a reply (JSON formatting is the emulator's). */
  send(res: ServerResponse, reply: Reply): void;
}

export function record<E>(log: E[], entry: E, limit = 20_000): void {
  log.push(entry);
  if (log.length > limit) {
    log.splice(0, log.length - limit);
  }
}

/** Resolves when the emulator closes or the client goes away. */
function untilGone(req: IncomingMessage, closing: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (closing.aborted || req.socket.destroyed) {
      resolve();
      return;
    }
    closing.addEventListener('abort', () => resolve(), { once: true });
    req.socket.once('close', () => resolve());
  });
}

export function createPipeline<R, E extends BaseLogEntry, B, X>(hooks: PipelineHooks<R, E, B, X>) {
  const log = (entry: E) => record(hooks.log, entry, hooks.logLimit);
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
    const method = (req.method ?? 'GET').toUpperCase();
    const path = url.pathname.replace(/\/{2,}/g, '/');
    const match = hooks.router.match(method, path) as Match<R>;
    const info: RequestInfo<R> = { req, res, url, method, path, match };
    const entry = hooks.entry(info);
    if (match === null || match === 'wrongMethod') {
      const { reply, log: logged } = hooks.unrouted(info);
      if (logged) {
        log({ ...entry, status: reply.status });
      }
      hooks.send(res, reply);
      return;
    }
    const { route, params } = match;
    let reply: Reply;
    let decision: FaultDecisionOf<FaultAction<X>> = { delayMs: 0 };
    try {
      const body =
        method === 'GET' || method === 'HEAD' ? hooks.emptyBody() : await hooks.readBody(req, entry);
      decision = hooks.decide(entry, route) ?? { delayMs: 0 };
      if (decision.delayMs > 0) {
        await sleep(decision.delayMs, undefined, { signal: hooks.closing }).catch(() => undefined);
      }
      const action = decision.action;
      if (action?.kind === 'dropRequest') {
        log({ ...entry, fault: 'dropRequest' });
        req.socket.destroy();
        return;
      }
      if (action?.kind === 'hang') {
        log({ ...entry, fault: 'hang' });
        await untilGone(req, hooks.closing);
        req.socket.destroy();
        return;
      }
      if (action?.kind === 'error') {
        entry.fault = 'error';
        reply = hooks.faultReply(action as Extract<FaultAction<X>, { kind: 'error' }>, entry);
      } else {
        reply = await hooks.handle({ req, url, method, path, route, params, body, entry });
      }
    } catch (error) {
      reply = hooks.errorReply(error);
    }
    if (decision.action?.kind === 'dropResponse') {
      log({ ...entry, status: reply.status, fault: 'dropResponse' });
      req.socket.destroy();
      return;
    }
    log({ ...entry, status: reply.status });
    hooks.send(res, reply);
  };
}
