/**
 * The request pipeline (the emulator kit's): route → body → injected faults (latency, errors,
 * dropped connections) → handler → reply, with every call written to a request log that tests
 * can assert on. Google's hooks: entries name the calendar and the calling account; errors
 * take Google's shapes; admin routes are never faulted and unrouted paths are not logged.
 */
import { bearerToken, createPipeline as kitPipeline } from '@calgate/emulator-kit';
import { apiErrors, errorForStatus, GoogleApiError } from './errors.ts';
import type { Faults } from './faults.ts';
import { errorReply, type RequestContext, type Route, type Router, readBody, send } from './http.ts';
import type { TokenStore } from './oauth/tokens.ts';

export interface RequestLogEntry {
  at: number;
  method: string;
  path: string;
  op: string;
  status: number;
  calendarId?: string;
  account?: string;
  /** The query's parameter names, in order (values left out: they may carry tokens). */
  params?: string[];
  /** Set when a fault rule decided the outcome (`error`, `dropResponse`, `dropRequest`). */
  fault?: string;
}

export interface PipelineDeps {
  router: Router;
  faults: Faults;
  tokens: TokenStore;
  log: RequestLogEntry[];
  now: () => number;
  closing: AbortSignal;
}

export function createPipeline(deps: PipelineDeps) {
  return kitPipeline<Route, RequestLogEntry, Record<string, unknown>, { reason?: string; message?: string }>({
    router: deps.router,
    log: deps.log,
    closing: deps.closing,
    entry({ req, url, method, path, match }) {
      const entry: RequestLogEntry = {
        at: deps.now(),
        method,
        path,
        op: match !== null && match !== 'wrongMethod' ? match.route.op : 'unknown',
        status: 0,
      };
      if (url.search !== '') {
        entry.params = [...url.searchParams.keys()];
      }
      if (match !== null && match !== 'wrongMethod' && match.params.calendarId !== undefined) {
        entry.calendarId = match.params.calendarId;
      }
      const token = bearerToken(req);
      const account = token === undefined ? undefined : deps.tokens.access.get(token)?.email;
      if (account !== undefined) {
        entry.account = account;
      }
      return entry;
    },
    unrouted({ match, path }) {
      const error =
        match === 'wrongMethod'
          ? new GoogleApiError(405, 'httpMethodNotAllowed', 'Method Not Allowed')
          : path.startsWith('/calendar/')
            ? apiErrors.notFound()
            : new GoogleApiError(404, 'notFound', 'Not Found');
      return { reply: errorReply(error), log: false };
    },
    readBody: (req) => readBody(req),
    emptyBody: () => ({}),
    decide: (entry, route) => (route.op.startsWith('admin.') ? undefined : deps.faults.decide(entry)),
    faultReply(action) {
      const reply = errorReply(errorForStatus(action.status, action.reason, action.message));
      if (action.retryAfterSeconds !== undefined) {
        reply.headers = { ...reply.headers, 'retry-after': String(action.retryAfterSeconds) };
      }
      return reply;
    },
    handle({ req, url, method, path, route, params, body }) {
      const ctx: RequestContext = {
        method,
        path,
        params,
        query: url.searchParams,
        headers: req.headers,
        body,
        baseUrl: `http://${req.headers.host ?? 'localhost'}`,
      };
      return route.handler(ctx);
    },
    errorReply,
    send,
  });
}
