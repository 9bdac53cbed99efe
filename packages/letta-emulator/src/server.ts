/**
 * The request pipeline: route → body → scripted faults (latency, errors, dropped or hanging
 * connections) → API key → handler → reply, with every call written to a request log.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { apiErrors, errorForStatus } from './errors.ts';
import type { FaultDecision, Faults } from './faults.ts';
import { errorReply, type Reply, type RequestContext, type Router, readJson, send } from './http.ts';
import type { LettaState } from './state.ts';

export interface RequestLogEntry {
  /** Epoch milliseconds on the emulator's clock. */
  at: number;
  method: string;
  path: string;
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

const LOG_LIMIT = 20_000;

function record(deps: PipelineDeps, entry: RequestLogEntry): void {
  deps.log.push(entry);
  if (deps.log.length > LOG_LIMIT) {
    deps.log.splice(0, deps.log.length - LOG_LIMIT);
  }
}

function queryObject(query: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(query.keys())) {
    const values = query.getAll(key);
    out[key] = values.length === 1 ? (values[0] as string) : values;
  }
  return out;
}

function bearer(req: IncomingMessage): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(String(req.headers.authorization ?? ''));
  return m?.[1];
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

export function createPipeline(deps: PipelineDeps) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://letta.invalid');
    const method = (req.method ?? 'GET').toUpperCase();
    const path = url.pathname.replace(/\/{2,}/g, '/');
    const matched = deps.router.match(method, path);
    const entry: RequestLogEntry = {
      at: deps.state.now(),
      method,
      path,
      op: matched !== null && matched !== 'wrongMethod' ? matched.route.op : 'unknown',
      status: 0,
      query: queryObject(url.searchParams),
    };
    const apiKey = bearer(req);
    if (apiKey !== undefined) {
      entry.apiKey = apiKey;
    }
    const retryCount = Number(req.headers['x-stainless-retry-count']);
    if (Number.isInteger(retryCount)) {
      entry.retryCount = retryCount;
    }
    if (matched === null || matched === 'wrongMethod') {
      const reply = errorReply(matched === null ? apiErrors.routeNotFound() : apiErrors.methodNotAllowed());
      record(deps, { ...entry, status: reply.status });
      send(res, reply);
      return;
    }
    const { route, params } = matched;
    if (params.agentId !== undefined) {
      entry.agentId = params.agentId;
    }
    let reply: Reply;
    let decision: FaultDecision = { delayMs: 0 };
    try {
      const body = method === 'GET' || method === 'HEAD' ? undefined : await readJson(req);
      if (body !== undefined) {
        entry.body = body;
      }
      decision = deps.faults.decide({
        op: route.op,
        method,
        ...(entry.agentId ? { agentId: entry.agentId } : {}),
      });
      if (decision.delayMs > 0) {
        await sleep(decision.delayMs, undefined, { signal: deps.closing }).catch(() => undefined);
      }
      const action = decision.action;
      if (action?.kind === 'dropRequest') {
        record(deps, { ...entry, fault: 'dropRequest' });
        req.socket.destroy();
        return;
      }
      if (action?.kind === 'hang') {
        record(deps, { ...entry, fault: 'hang' });
        await untilGone(req, deps.closing);
        req.socket.destroy();
        return;
      }
      if (action?.kind === 'error') {
        entry.fault = 'error';
        reply = errorReply(errorForStatus(action.status, action.detail, action.retryAfterSeconds));
      } else {
        const organization = route.public
          ? ''
          : apiKey === undefined
            ? undefined
            : deps.state.organizationOf(apiKey);
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
