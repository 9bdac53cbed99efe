import { randomBytes } from 'node:crypto';
import {
  type ExposureLog,
  type KeyTurns,
  MemoryOnceLedger,
  type OnceLedger,
  type RateLimiter,
} from '@calgate/locks';
import {
  type AuditLog,
  type ConfirmationRepository,
  clientAddressOf,
  clientNameOf,
  type KeyAccess,
} from '@calgate/store';
import {
  type BudgetLimits,
  CalendarAccess,
  type Catalogue,
  CpuPool,
  CpuTurns,
  createMcpServer,
  DEFAULT_BUDGET,
  directToolCall,
  jsonOf,
  type ProviderResolver,
  type SchedulerServices,
  type SessionOptions,
  serverIcons,
  WorkBudget,
} from '@calgate/tools';
import { type RequestId, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { KeyAuthenticator } from '../auth.ts';
import type { BookingFactory } from '../booking.ts';
import type { CalendarChanges } from '../calendar-changes.ts';
import {
  type ClientCapabilityStore,
  declaresFormElicitation,
  MemoryClientCapabilityStore,
} from '../client-capabilities.ts';
import type { DirectoryFactory } from '../directory.ts';
import type { KeySettingsFactory } from '../key-settings.ts';
import { type LogLevelStore, MemoryLogLevelStore } from '../log-levels.ts';
import type { RulesFactory } from '../rules.ts';
import { confirmationsFor } from './confirmations.ts';
import { ElicitationRelay } from './elicitation-relay.ts';
import { errorBody } from './errors.ts';
import { KeySlots } from './key-slots.ts';
import { mcpGuard } from './mcp-guard.ts';
import { directRequest, type EncodedAnswer, jsonRpcBytes, OneShotTransport, speak2025 } from './mcp-json.ts';
import {
  acceptsEventStream,
  callsRiskyTool,
  envelopeDeclaresForms,
  FORWARDED_HEADERS,
  initializeParams,
  wantsProgress,
} from './mcp-messages.ts';
import { directModernCall, modernToolResult } from './mcp-modern.ts';
import { modernServing } from './mcp-modern-route.ts';
import { principalOf } from './mcp-principal.ts';
import type { ToolStreamOptions } from './mcp-streams.ts';
import { openToolStream, toolListStreams } from './mcp-tool-streams.ts';
import type { Metrics } from './metrics.ts';
import { originPolicy } from './origins.ts';
import { webRequest } from './web-request.ts';

export { principalOf } from './mcp-principal.ts';

/** Scheduled prompts and delivery targets for one API key (its own schedules, its tenant's targets). */
export type SchedulerFactory = (key: { tenantId: string; keyId: string }) => SchedulerServices;

export interface McpRouteDeps {
  catalogue: Catalogue;
  authenticator: KeyAuthenticator;
  rateLimiter: RateLimiter;
  /** What each key's agent was shown that may carry instructions; nothing is recorded when absent. */
  exposures?: ExposureLog | undefined;
  /** Risky calls waiting for a person's confirmation; without it no action is checked. */
  confirmations?: ConfirmationRepository | undefined;
  /** Carries clients' answers to elicitation forms to the waiting call; this process only when absent. */
  elicitations?: ElicitationRelay | undefined;
  /** Signs the state of 2026-07-28 input_required questions; a key of this process when absent. */
  inputStateKey?: Uint8Array | undefined;
  /** Claims each input_required state's one use (Redis, across gateways); this process only when absent. */
  inputStates?: OnceLedger | undefined;
  /** Calendars the mirror saw change: listen streams that may read one are told it was updated. */
  calendarChanges?: CalendarChanges | undefined;
  /** Whether each key's client declared form elicitation; a store of this process when absent. */
  clientCapabilities?: ClientCapabilityStore | undefined;
  /** Each key's MCP log level (logging/setLevel); a store of this process when absent. */
  logLevels?: LogLevelStore | undefined;
  audit: AuditLog;
  /** Tool calls and refusals for GET /metrics; nothing is counted when absent. */
  metrics?: Metrics | undefined;
  providers: ProviderResolver;
  allowedOrigins: readonly string[];
  /** This endpoint's public URL, as the transport's web Request sees it. */
  mcpUrl: string;
  /** Base for links to Calgate's own event pages. */
  publicUrl: string;
  version: string;
  /** Creates calendars for create_calendar; the tool answers 'unavailable' without it. */
  directory?: DirectoryFactory | undefined;
  /** Locks and ledger for book_slot; the tool answers 'unavailable' without them. */
  booking?: BookingFactory | undefined;
  /** Projects, rules and classifications for the rules tools; they answer 'unavailable' without them. */
  rules?: RulesFactory | undefined;
  /** Scheduled prompts for the scheduler tools; they answer 'unavailable' without it. */
  scheduler?: SchedulerFactory | undefined;
  /** The calling key's own settings for set_time_zone; it answers 'unavailable' without them. */
  keySettings?: KeySettingsFactory | undefined;
  /** OUTBOUND_ALLOW_PRIVATE, for addresses tools fetch (import_events' url); refused when absent. */
  outboundAllowPrivate?: boolean | undefined;
  /** Keep-alive and re-check intervals and limits of GET streams; defaults suit production. */
  mcpStreams?: Partial<ToolStreamOptions> | undefined;
  /** What one request may cost and how many calls a key runs at once; defaults when absent. */
  mcpLimits?:
    | { budget: BudgetLimits; concurrentPerKey: number; queuedPerKey: number; cpuWorkers: number }
    | undefined;
  /**
   * Each key's concurrent-call slots shared by every gateway (Redis); this process's own
   * (`KeySlots` over `mcpLimits`) when absent.
   */
  keySlots?: KeyTurns | undefined;
  /** Each key's CPU-bound turns across gateways (Redis), taken before this process's own turn. */
  keyCpuTurns?: KeyTurns | undefined;
}
/**
 * A CPU-bound call's turn: first the key's turn across gateways (so one key's heavy calls are
 * paced together wherever they land), then this process's (so its event loop stays responsive).
 */
function keyThenProcess(
  keyTurns: KeyTurns,
  keyId: string,
  processTurns: CpuTurns,
): Pick<CpuTurns, 'acquire'> {
  return {
    async acquire() {
      const keyTurn = await keyTurns.acquire(keyId);
      try {
        const processTurn = await processTurns.acquire();
        return () => {
          processTurn();
          keyTurn();
        };
      } catch (error) {
        keyTurn();
        throw error;
      }
    },
  };
}

/**
 * The MCP endpoint: Origin check, bearer key, per-key rate limit, then the SDK's streamable
 * HTTP transport over a server built for this key — or, for a plain JSON request, the server
 * without that transport (mcp-json.ts), and for the common tool call not even the server
 * (directToolCall), each answering exactly as the full path would. Stateless: any gateway
 * process can answer any POST. GET opens a stream that only announces tool-list changes (see
 * mcp-streams.ts), so it needs no session either; DELETE (session end) answers 405.
 */
export function registerMcpRoutes(app: FastifyInstance, deps: McpRouteDeps): void {
  const origins = originPolicy(deps.publicUrl, deps.allowedOrigins);
  const limits = deps.mcpLimits ?? {
    budget: DEFAULT_BUDGET,
    concurrentPerKey: 8,
    queuedPerKey: 200,
    cpuWorkers: 1,
  };
  const slots: KeyTurns = deps.keySlots ?? new KeySlots(limits);
  const serverInfo = {
    name: 'calgate',
    title: 'Calgate',
    version: deps.version,
    ...serverIcons(deps.publicUrl),
  };
  const logLevels = deps.logLevels ?? new MemoryLogLevelStore();
  const capabilities = deps.clientCapabilities ?? new MemoryClientCapabilityStore();
  const relay = deps.elicitations ?? new ElicitationRelay();
  // Shared by every gateway process (derived from ENCRYPTION_KEY) so a retry may reach another one.
  const inputStateKey = deps.inputStateKey ?? randomBytes(32);
  const inputStates = deps.inputStates ?? new MemoryOnceLedger();
  const cpuTurns = new CpuTurns();
  // No worker threads (CPU_WORKERS=0): CPU-bound calls run in-process, in their paced turns.
  const cpu = limits.cpuWorkers > 0 ? new CpuPool(limits.cpuWorkers) : undefined;
  app.addHook('onClose', async () => cpu?.close());
  const guard = mcpGuard(deps, origins, logLevels, slots);

  // 2026-07-28 requests; their listen streams are the key's change streams, made below.
  const serveModern = modernServing(app, deps, () => streams);

  // A request may carry as much text as its answer may be (import_events' ics), with room for
  // JSON's escapes (each CRLF of iCalendar text is four characters) and the envelope.
  const bodyLimit = Math.max(1024 * 1024, 2 * limits.budget.answerBytes + 64 * 1024);
  app.post('/api/mcp', { preHandler: guard, bodyLimit }, async (request, reply) => {
    const key = request.keyAccess as KeyAccess;
    // The slot the guard asked for goes back when no call took it: as soon as the answer is made
    // (before it is sent, as a call's own slot is, so the client's next call finds it free), or
    // when the request ends however it ends.
    const early = request.earlySlot;
    if (early !== undefined) {
      reply.raw.once('close', () => early.drop());
    }
    // A client's answer to a form one of this key's calls is waiting on (see ElicitationRelay).
    if (relay.deliver(key.keyId, request.body)) {
      return reply.status(202).send();
    }
    const era = request.mcpEra ?? 'legacy';
    const initialize = initializeParams(request.body);
    if (initialize !== undefined) {
      await capabilities.setElicits(key.keyId, declaresFormElicitation(initialize));
    }
    const access = new CalendarAccess(principalOf(key), deps.providers);
    // Only tool calls send log messages; other requests skip the look-up.
    const logLevel = await request.logLevel;
    // A risky call of a client that can show forms may ask the person: on the call's own stream
    // (2025-11-25, the capability declared at initialize), or as the call's input_required result
    // (2026-07-28, the capability declared in the request's envelope).
    const canElicit =
      deps.confirmations !== undefined &&
      key.hijackPolicy === 'ask' &&
      callsRiskyTool(request.body) &&
      (era === 'modern' ? envelopeDeclaresForms(request.body) : await capabilities.elicits(key.keyId));
    // Plain JSON answers unless the client asked for progress, which needs an event stream.
    // Log messages of a key that set a level travel on the call's event stream too.
    const jsonAnswer = !wantsProgress(request.body) && logLevel === undefined && !canElicit;
    const direct = jsonAnswer && era === 'legacy' ? directRequest(request.headers, request.body) : undefined;
    let encoded: EncodedAnswer | undefined;
    const session: SessionOptions = {
      catalogue: deps.catalogue,
      access,
      requestId: request.id,
      version: deps.version,
      publicUrl: deps.publicUrl,
      outbound: { allowPrivate: deps.outboundAllowPrivate ?? false },
      onCall: (record) => {
        deps.metrics?.toolCall(record);
        deps.audit.record({
          ...record,
          tenantId: key.tenantId,
          keyId: key.keyId,
          requestId: request.id,
          clientName: clientNameOf(request.headers['user-agent']),
          clientAddress: clientAddressOf(request.ip),
          at: new Date(),
        });
      },
      onInternalError: (error, tool) => request.log.error({ err: error, tool }, 'tool failed'),
      logLevel,
      setLogLevel: (level) => logLevels.set(key.keyId, level),
      budget: new WorkBudget(limits.budget),
      admit: () =>
        early === undefined ? slots.acquire(key.keyId) : early.take(() => slots.acquire(key.keyId)),
      cpuTurns:
        deps.keyCpuTurns === undefined ? cpuTurns : keyThenProcess(deps.keyCpuTurns, key.keyId, cpuTurns),
      exposures: deps.exposures,
      canElicit,
      inputStateKey,
      inputStates,
      era,
      ...(deps.confirmations === undefined
        ? {}
        : confirmationsFor(deps.confirmations, deps.audit, key, {
            requestId: request.id,
            clientName: clientNameOf(request.headers['user-agent']),
            clientAddress: clientAddressOf(request.ip),
          })),
      ...(cpu === undefined ? {} : { cpu }),
      ...(deps.directory === undefined ? {} : { directory: deps.directory(access) }),
      ...(deps.booking === undefined
        ? {}
        : { booking: deps.booking({ tenantId: key.tenantId, keyId: key.keyId }) }),
      ...(deps.rules === undefined
        ? {}
        : { rules: deps.rules({ tenantId: key.tenantId, keyId: key.keyId }) }),
      ...(deps.scheduler === undefined
        ? {}
        : { scheduler: deps.scheduler({ tenantId: key.tenantId, keyId: key.keyId }) }),
      ...(deps.keySettings === undefined
        ? {}
        : { keySettings: deps.keySettings({ tenantId: key.tenantId, keyId: key.keyId }) }),
      ...(direct === undefined
        ? {}
        : {
            onAnswer: (id: RequestId, structured: Record<string, unknown>, json: string) => {
              if (id === direct.id) {
                encoded = { structured, json };
              }
            },
          }),
    };
    // The common call needs no MCP server object at all (see directToolCall), in either revision.
    const plainCall =
      direct?.method === 'tools/call'
        ? { id: direct.id, params: direct.params }
        : jsonAnswer && era === 'modern'
          ? directModernCall(request.headers, request.body)
          : undefined;
    if (plainCall !== undefined) {
      const aborted = new AbortController();
      const call = directToolCall(session, plainCall.params, aborted.signal);
      if (call !== undefined) {
        // A client that goes away mid-call aborts it; nothing is sent.
        reply.raw.once('close', () => {
          if (!reply.raw.writableFinished) {
            aborted.abort();
          }
        });
        const answer = await call;
        early?.drop();
        if (aborted.signal.aborted) {
          return reply.hijack();
        }
        const { structuredContent } = answer;
        const result = era === 'modern' ? modernToolResult(answer, serverInfo) : answer;
        return reply
          .status(200)
          .header('content-type', 'application/json')
          .send(
            jsonRpcBytes(
              { result, jsonrpc: '2.0', id: plainCall.id },
              structuredContent === undefined || structuredContent === null
                ? undefined
                : {
                    structured: structuredContent as Record<string, unknown>,
                    json: jsonOf(structuredContent),
                  },
            ),
          );
      }
    }
    if (era === 'modern') {
      const served = await serveModern(request, reply, key, session);
      early?.drop();
      return served;
    }
    const server = createMcpServer(session);
    if (direct !== undefined) {
      // One request, one JSON answer: served without the SDK transport (see mcp-json.ts).
      const oneShot = new OneShotTransport(direct.id);
      // A client that goes away mid-call aborts the handler; nothing is sent.
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) {
          void oneShot.close();
        }
      });
      await server.connect(oneShot);
      oneShot.deliver(direct);
      const message = await oneShot.answer;
      early?.drop();
      if (message === undefined) {
        return reply.hijack();
      }
      // As bytes, so the content type stays exactly what the SDK sends (no charset added).
      return reply
        .status(200)
        .header('content-type', 'application/json')
        .send(jsonRpcBytes(message, encoded));
    }
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: jsonAnswer,
    });
    // The transport speaks web Request/Response; Fastify has already read and parsed the body.
    const headers = new Headers();
    for (const name of FORWARDED_HEADERS) {
      const value = request.headers[name];
      if (typeof value === 'string') {
        headers.set(name, value);
      }
    }
    speak2025(transport);
    // A client that goes away mid-call aborts the handlers (the request's signal). A finished
    // exchange needs no close: nothing outlives the request, and closing costs an Error per call.
    const { request: asked } = webRequest(reply, deps.mcpUrl, headers);
    const unwatch = canElicit ? relay.watch(transport, key.keyId) : undefined;
    reply.raw.once('close', () => {
      unwatch?.();
      if (!reply.raw.writableFinished) {
        void transport.close();
        void server.close();
      }
    });
    await server.connect(transport);
    const response = await transport.handleRequest(asked, { parsedBody: request.body });
    early?.drop();
    reply.status(response.status);
    response.headers.forEach((value, name) => {
      reply.header(name, value);
    });
    // JSON answers are sent as bytes in one write; event streams are piped.
    if (response.headers.get('content-type')?.startsWith('application/json')) {
      return reply.send(Buffer.from(await response.arrayBuffer()));
    }
    return reply.send(response.body);
  });

  const notAllowed = (message: string) => async (request: FastifyRequest, reply: FastifyReply) =>
    reply
      .status(405)
      .header('allow', 'GET, POST')
      .send(errorBody('invalid_argument', message, request.id));
  const noStream = notAllowed(
    'GET /api/mcp opens an event stream of tool-list changes and needs Accept: text/event-stream; send JSON-RPC messages with POST.',
  );
  app.get('/api/mcp', { preHandler: guard }, async (request, reply) => {
    if (!acceptsEventStream(request.headers.accept)) {
      return noStream(request, reply);
    }
    return openToolStream(streams, deps, request, reply);
  });
  app.delete(
    '/api/mcp',
    { preHandler: guard },
    notAllowed('Calgate serves MCP statelessly: there is no session to end.'),
  );

  const streams = toolListStreams(app, deps);
}
