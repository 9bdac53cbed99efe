/**
 * The request pipeline (the emulator kit's): route → body → scripted faults → API key →
 * handler → reply, with every call written to a request log. Letta's hooks: log entries with
 * the query, body, key and retry count; `{detail}` errors; API key checks.
 */
import {
  type BaseLogEntry,
  bearerToken,
  createPipeline as kitPipeline,
  queryObject,
} from '@calgate/emulator-kit';
import { apiErrors, errorForStatus } from './errors.ts';
import type { Faults } from './faults.ts';
import { errorReply, type RequestContext, type Route, type Router, readJson, send } from './http.ts';
import type { LettaState } from './state.ts';

export interface RequestLogEntry extends BaseLogEntry {
  /** Epoch milliseconds on the emulator's clock. */
  at: number;
  /** `agents.list`, `agents.retrieve`, `messages.create`, `health`; `unknown` for unrouted paths. */
  op: string;
  /** 0 when no response was sent (dropped or hanging connection). */
  status: number;
  query: Record<string, string | string[]>;
  agentId?: string;
  /** The bearer token sent, exactly. */
  apiKey?: string;
  /** The parsed JSON body, when there was one. */
  body?: unknown;
  /** The client's retry attempt (`x-stainless-retry-count`), when it says. */
  retryCount?: number;
  /** Set when a scripted fault decided the outcome. */
  fault?: 'error' | 'dropRequest' | 'dropResponse' | 'hang';
}

export interface PipelineDeps {
  router: Router;
  faults: Faults;
  state: LettaState;
  log: RequestLogEntry[];
  /** Aborted when the emulator closes, releasing delayed and hanging requests. */
  closing: AbortSignal;
}

export function createPipeline(deps: PipelineDeps) {
  return kitPipeline<Route, RequestLogEntry, unknown, { detail?: string }>({
    router: deps.router,
    log: deps.log,
    closing: deps.closing,
    entry({ req, url, method, path, match }) {
      const entry: RequestLogEntry = {
        at: deps.state.now(),
        method,
        path,
        op: match !== null && match !== 'wrongMethod' ? match.route.op : 'unknown',
        status: 0,
        query: queryObject(url.searchParams),
      };
      const apiKey = bearerToken(req);
      if (apiKey !== undefined) {
        entry.apiKey = apiKey;
      }
      const retryCount = Number(req.headers['x-stainless-retry-count']);
      if (Number.isInteger(retryCount)) {
        entry.retryCount = retryCount;
      }
      if (match !== null && match !== 'wrongMethod' && match.params.agentId !== undefined) {
        entry.agentId = match.params.agentId;
      }
      return entry;
    },
    unrouted: ({ match }) => ({
      reply: errorReply(match === null ? apiErrors.routeNotFound() : apiErrors.methodNotAllowed()),
      log: true,
    }),
    async readBody(req, entry) {
      const body = await readJson(req);
      if (body !== undefined) {
        entry.body = body;
      }
      return body;
    },
    emptyBody: () => undefined,
    decide: (entry, route) =>
      deps.faults.decide({
        op: route.op,
        method: entry.method,
        ...(entry.agentId ? { agentId: entry.agentId } : {}),
      }),
    faultReply: (action) =>
      errorReply(errorForStatus(action.status, action.detail, action.retryAfterSeconds)),
    handle({ req, url, method, path, route, params, body, entry }) {
      const organization = route.public
        ? ''
        : entry.apiKey === undefined
          ? undefined
          : deps.state.organizationOf(entry.apiKey);
      if (organization === undefined) {
        throw apiErrors.unauthorized();
      }
      const ctx: RequestContext = {
        method,
        path,
        params,
        query: url.searchParams,
        headers: req.headers,
        body,
        organization,
      };
      return route.handler(ctx);
    },
    errorReply,
    send,
  });
}
