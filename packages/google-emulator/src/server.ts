/**
 * The request pipeline: route → body → injected faults (latency, errors, dropped connections)
 * → handler → reply, with every call written to a request log that tests can assert on.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { apiErrors, errorForStatus, GoogleApiError } from './errors.ts';
import type { FaultDecision, Faults } from './faults.ts';
import { errorReply, type Reply, type RequestContext, type Router, readBody, send } from './http.ts';
import type { TokenStore } from './oauth/tokens.ts';

export interface RequestLogEntry {
  at: number;
  method: string;
  path: string;
  op: string;
  status: number;
  calendarId?: string;
  account?: string;
  /** Set when a fault rule decided the outcome (`error`, `dropResponse`, `dropRequest`). */
  fault?: string;
}

export interface PipelineDeps {
  router: Router;
  faults: Faults;
  tokens: TokenStore;
  log: RequestLogEntry[];
  now: () => number;
}

const LOG_LIMIT = 20_000;

function accountOf(tokens: TokenStore, req: IncomingMessage): string | undefined {
  const m = /^Bearer\s+(\S+)$/i.exec(String(req.headers.authorization ?? ''));
  return m ? tokens.access.get(m[1] as string)?.email : undefined;
}

function record(deps: PipelineDeps, entry: RequestLogEntry): void {
  deps.log.push(entry);
  if (deps.log.length > LOG_LIMIT) {
    deps.log.splice(0, deps.log.length - LOG_LIMIT);
  }
}

function faultReply(decision: FaultDecision): Reply | null {
  const action = decision.action;
  if (action?.kind !== 'error') {
    return null;
  }
  const error = errorForStatus(action.status, action.reason, action.message);
  const reply = errorReply(error);
  if (action.retryAfterSeconds !== undefined) {
    reply.headers = { ...reply.headers, 'retry-after': String(action.retryAfterSeconds) };
  }
  return reply;
}

export function createPipeline(deps: PipelineDeps) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
    const method = (req.method ?? 'GET').toUpperCase();
    const path = url.pathname.replace(/\/{2,}/g, '/');
    const matched = deps.router.match(method, path);
    if (matched === null || matched === 'wrongMethod') {
      const error = path.startsWith('/calendar/')
        ? apiErrors.notFound()
        : new GoogleApiError(404, 'notFound', 'Not Found');
      send(
        res,
        errorReply(
          matched === 'wrongMethod'
            ? new GoogleApiError(405, 'httpMethodNotAllowed', 'Method Not Allowed')
            : error,
        ),
      );
      return;
    }
    const { route, params } = matched;
    const entry: RequestLogEntry = { at: deps.now(), method, path, op: route.op, status: 0 };
    if (params.calendarId !== undefined) {
      entry.calendarId = params.calendarId;
    }
    const account = accountOf(deps.tokens, req);
    if (account !== undefined) {
      entry.account = account;
    }
    let reply: Reply;
    let decision: FaultDecision = { delayMs: 0 };
    try {
      const body = method === 'GET' || method === 'HEAD' ? {} : await readBody(req);
      if (!route.op.startsWith('admin.')) {
        decision = deps.faults.decide(entry);
      }
      if (decision.delayMs > 0) {
        await sleep(decision.delayMs);
      }
      if (decision.action?.kind === 'dropRequest') {
        record(deps, { ...entry, fault: 'dropRequest' });
        req.socket.destroy();
        return;
      }
      const injected = faultReply(decision);
      if (injected) {
        entry.fault = 'error';
        reply = injected;
      } else {
        const ctx: RequestContext = {
          method,
          path,
          params,
          query: url.searchParams,
          headers: req.headers,
          body,
          baseUrl: `http://${req.headers.host ?? 'localhost'}`,
        };
        reply = await route.handler(ctx);
      }
    } catch (error) {
      reply = errorReply(error);
    }
    if (decision.action?.kind === 'dropResponse') {
      record(deps, { ...entry, status: reply.status, fault: 'dropResponse' });
      req.socket.destroy();
      return;
    }
    record(deps, { ...entry, status: reply.status });
    send(res, reply);
  };
}
