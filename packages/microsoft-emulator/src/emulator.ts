/**
 * startMicrosoftEmulator: wires state, tokens, throttling, faults and routes into one node:http
 * server through the emulator kit's pipeline.
 */
import { bearerToken, createPipeline, listen } from '@calgate/emulator-kit';
import { createAdmin, type MicrosoftEmulatorAdmin, type RequestLogEntry } from './admin.ts';
import { adminRoutes } from './admin-routes.ts';
import { callerOf, GRAPH_PREFIX } from './api.ts';
import { errorForStatus, graphErrors } from './errors.ts';
import { eventRoutes } from './event-routes.ts';
import { type ErrorFields, Faults } from './faults.ts';
import { errorReply, type RequestContext, type Route, Router, readBody, send } from './http.ts';
import { identityRoutes } from './identity.ts';
import { meRoutes, type Paging } from './me-routes.ts';
import { scheduleRoutes } from './schedule.ts';
import { applySeed, DEFAULT_CLIENT, type MicrosoftSeed } from './seed.ts';
import { type Clock, MicrosoftState } from './state.ts';
import { Notifier, subscriptionRoutes } from './subscriptions.ts';
import { Throttle, type ThrottleLimits } from './throttle.ts';
import { viewRoutes } from './views.ts';

export interface MicrosoftEmulatorOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  host?: string;
  seed?: MicrosoftSeed;
  clock?: Clock;
  /** Seed for the fault dice (error rates, jitter). */
  randomSeed?: number;
  throttle?: Partial<ThrottleLimits>;
  /** First pages one item shorter than `$top` (default true: Graph may answer short pages). */
  shortPages?: boolean;
}

export interface MicrosoftEmulator {
  /** Base URL without a trailing slash. */
  url: string;
  /** `MICROSOFT_GRAPH_URL`: `${url}/v1.0`. */
  graphUrl: string;
  /** `MICROSOFT_LOGIN_URL`: the token endpoint is `${loginUrl}/${tenant}/oauth2/v2.0/token`. */
  loginUrl: string;
  /** The confidential client every emulator knows. */
  client: { clientId: string; clientSecret: string };
  admin: MicrosoftEmulatorAdmin;
  close(): Promise<void>;
}

export async function startMicrosoftEmulator(
  options: MicrosoftEmulatorOptions = {},
): Promise<MicrosoftEmulator> {
  const state = new MicrosoftState(options.clock ?? { now: () => Date.now() });
  const faults = new Faults(options.randomSeed);
  const throttle = new Throttle(options.throttle);
  const paging: Paging = { shortPages: options.shortPages ?? true };
  const log: RequestLogEntry[] = [];
  const notifier = new Notifier(state);
  const initialSeed = options.seed ?? {};
  applySeed(state, initialSeed);
  const admin = createAdmin({ state, faults, log, throttle, paging, notifier, initialSeed });
  const router = new Router();
  router.add([
    ...adminRoutes(admin),
    ...identityRoutes(state),
    ...meRoutes(state, paging),
    ...viewRoutes(state, paging),
    ...scheduleRoutes(state),
    ...subscriptionRoutes(state, notifier),
    ...eventRoutes(state, paging, notifier),
  ]);
  const verdicts = new WeakMap<object, ReturnType<typeof graphErrors.throttled>>();
  const server = await listen(
    (closing) =>
      createPipeline<Route, RequestLogEntry, Record<string, unknown>, ErrorFields>({
        router,
        log,
        closing,
        entry({ req, res, url, method, path, match }) {
          const entry: RequestLogEntry = {
            at: state.now(),
            method,
            path,
            op: match !== null && match !== 'wrongMethod' ? match.route.op : 'unknown',
            status: 0,
            query: url.search,
          };
          if (req.headers.prefer !== undefined) {
            entry.prefer = String(req.headers.prefer);
          }
          if (match !== null && match !== 'wrongMethod' && match.params.calendarId !== undefined) {
            entry.calendarId = match.params.calendarId;
          }
          const caller = callerOf(state, bearerToken(req));
          if (caller) {
            entry.mailbox = caller.record.email;
            // Graph's per-mailbox limits: counted from arrival to the answer leaving.
            if (path.startsWith(`${GRAPH_PREFIX}/`) && match !== null && match !== 'wrongMethod') {
              const admitted = throttle.admit(caller.record.email, state.now());
              if ('error' in admitted) {
                verdicts.set(req, admitted.error);
              } else {
                res.once('close', admitted.release);
              }
            }
          }
          return entry;
        },
        unrouted: ({ match, path }) => ({
          reply: errorReply(
            match === 'wrongMethod' ? graphErrors.methodNotAllowed() : graphErrors.noRoute(path),
            state.now(),
          ),
          log: true,
        }),
        readBody: (req) => readBody(req),
        emptyBody: () => ({}),
        decide: (entry, route) => (route.op.startsWith('admin.') ? undefined : faults.decide(entry)),
        faultReply(action) {
          const reply = errorReply(errorForStatus(action.status, action.code, action.message), state.now());
          if (action.retryAfterSeconds !== undefined) {
            reply.headers = { ...reply.headers, 'retry-after': String(action.retryAfterSeconds) };
          }
          if (action.status === 401) {
            reply.headers = {
              ...reply.headers,
              'www-authenticate': 'Bearer realm="", error="invalid_token"',
            };
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
          const verdict = verdicts.get(req);
          if (verdict) {
            ctx.throttled = verdict;
          }
          return route.handler(ctx);
        },
        errorReply: (error) => errorReply(error, state.now()),
        send,
      }),
    { port: options.port, host: options.host },
  );
  return {
    url: server.url,
    graphUrl: `${server.url}${GRAPH_PREFIX}`,
    loginUrl: server.url,
    client: { clientId: DEFAULT_CLIENT.clientId, clientSecret: DEFAULT_CLIENT.clientSecret as string },
    admin,
    close: () => server.close(),
  };
}
