/**
 * One tool call, whichever way it came: the full server's tools/call and the direct fast path
 * (directToolCall) both run callTool.
 */
import { CalgateError, type ErrorCode } from '@calgate/core';
import { whileListeningForRetries } from '@calgate/providers';
import type { CallToolResult } from '@modelcontextprotocol/server';
import {
  callDigest,
  checkCallDigest,
  decodePageToken,
  fitAnswer,
  isPageToken,
  type PageCursor,
  resumeAfter,
} from './answer-limit.ts';
import { WorkBudget } from './budget.ts';
import type { CatalogueEntry } from './catalogue.ts';
import { insiders, readScreen, recordExposures } from './firewall/read-side.ts';
import { jsonOf } from './format.ts';
import { argsHash, DEFAULT_HIJACK_POLICY, type Elicit, guardAction } from './guard/confirm.ts';
import { RISKY_TOOLS, riskyAction } from './guard/risky.ts';
import { modernize } from './legacy.ts';
import { logPartialResult, logUpstreamRetry, type ToolLog } from './logging.ts';
import type { SessionOptions, ToolCallRecord } from './server.ts';
import { asUnavailable, retryOnce } from './transient.ts';
import { describeInputError, unsafeTextIn } from './validation.ts';
import { isVisible } from './visibility.ts';

const CONFIRMATION_ID = /^cnf_[A-Za-z0-9_-]{1,64}$/;

/** Takes a `confirmation` id out of a risky tool's arguments (it is never part of a schema). */
function takeConfirmation(
  tool: string,
  rawArgs: unknown,
): { args: unknown; confirmation?: string; error?: string } {
  if (!RISKY_TOOLS.has(tool) || !isPlainObject(rawArgs) || !('confirmation' in rawArgs)) {
    return { args: rawArgs };
  }
  const { confirmation, ...args } = rawArgs;
  if (typeof confirmation !== 'string' || !CONFIRMATION_ID.test(confirmation)) {
    return {
      args,
      error: `Invalid arguments for ${tool}: confirmation must be the id a refusal named, such as "cnf_…"; leave it out to ask the person again.`,
    };
  }
  return { args, confirmation };
}

const DENIED: ReadonlySet<ErrorCode> = new Set(['permission_denied', 'not_found']);

/** A failed call's answer, keys in the order the SDK's result schema writes them (the direct path sends it as it is). */
export function errorResult(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

/** Tells the client how far a call has come (notifications/progress, when it asked with a token). */
export type ProgressReporter = (done: number, total?: number, message?: string) => Promise<void>;

const NO_PROGRESS: ProgressReporter = async () => {};

/** Lets timers, health checks and other keys' requests run between the calls of a batch. */
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Runs one tool call: the single place where arguments are validated, errors become `isError`
 * results, and every call is recorded. Handlers only ever see valid arguments and a
 * grant-checking CalendarAccess.
 */
export async function callTool(
  options: SessionOptions,
  entry: CatalogueEntry,
  rawArgs: unknown,
  signal: AbortSignal,
  progress: ProgressReporter = NO_PROGRESS,
  meta?: Record<string, unknown>,
  log: ToolLog = () => {},
  elicit?: Elicit,
): Promise<CallToolResult> {
  const started = performance.now();
  const { definition } = entry;
  let outcome: ToolCallRecord['outcome'] = 'ok';
  /** Settings the call changed, for its audit row (see ToolContext.audit). */
  const changes: string[] = [];
  let errorCode: string | null = null;
  let release: (() => void) | undefined;
  // Work the call started may outlive it (a shared refresh, say); its retries then go untold.
  let answering = true;
  try {
    const taken = takeConfirmation(definition.name, rawArgs);
    if (taken.error !== undefined) {
      outcome = 'error';
      errorCode = 'invalid_argument';
      return errorResult(taken.error);
    }
    let given = taken.args;
    // A nextPageToken this gate gave (answer-limit.ts) is taken out; the tool's own token it kept goes back.
    let page: PageCursor | undefined;
    if (isPlainObject(given) && isPageToken(given.pageToken)) {
      page = decodePageToken(given.pageToken, definition.name);
      const { pageToken: _gate, ...others } = given;
      given = page.n === undefined ? others : { ...others, pageToken: page.n };
    }
    const unsafe = unsafeTextIn(given);
    if (unsafe !== undefined) {
      outcome = 'error';
      errorCode = 'invalid_argument';
      return errorResult(`Invalid arguments for ${definition.name}: ${unsafe}`);
    }
    const parameters = Object.keys(definition.input.shape);
    const { args, notes } = modernize(new Set(parameters), given ?? {});
    const parsed = definition.input.safeParse(args, { reportInput: true });
    if (!parsed.success) {
      outcome = 'error';
      errorCode = 'invalid_argument';
      return errorResult(describeInputError(definition.name, parsed.error, parameters, definition.input));
    }
    const callArgs = parsed.data as Record<string, unknown>;
    if (page !== undefined) {
      checkCallDigest(page, callDigest(callArgs, argsHash), definition.name);
    }
    // Before a slot is taken: a person may take a while to answer. Other tools skip even the await.
    const verdict = RISKY_TOOLS.has(definition.name)
      ? await guard(options, definition.name, parsed.data, taken.confirmation, elicit)
      : undefined;
    if (verdict !== undefined && !verdict.ok) {
      outcome = 'denied';
      errorCode = verdict.code;
      return errorResult(verdict.message);
    }
    // A key's calls beyond its concurrency wait here; a batch's calls take turns with other work.
    release = await options.admit?.();
    const cpuBound =
      typeof definition.cpuBound === 'function'
        ? definition.cpuBound(parsed.data)
        : definition.cpuBound === true;
    const turn = cpuBound ? await options.cpuTurns?.acquire() : undefined;
    const previous = release;
    release = () => {
      turn?.();
      previous?.();
    };
    if (turn === undefined) {
      await yieldToEventLoop();
    }
    const budget = options.budget ?? new WorkBudget();
    const context = {
      access: options.access,
      requestId: options.requestId,
      signal,
      now: options.now ?? (() => new Date()),
      progress,
      directory: options.directory,
      booking: options.booking,
      rules: options.rules,
      scheduler: options.scheduler,
      meta,
      publicUrl: options.publicUrl,
      budget,
      cpu: options.cpu,
      log,
      keySettings: options.keySettings,
      outbound: options.outbound,
      audit: (change: string) => {
        changes.push(change);
      },
    };
    // Google calls of the tool that fail and are tried again are told to the client as they happen.
    const run = () =>
      whileListeningForRetries(
        (retry) => {
          if (answering) {
            logUpstreamRetry(definition.name, retry, options.access.list(), log);
          }
        },
        () => definition.run(parsed.data, context),
      );
    // Reads are safe to repeat: one that met a database or cache restart is retried once.
    const raw = definition.annotations.readOnlyHint
      ? await retryOnce(run, {
          signal,
          onRetry: () =>
            log('warning', {
              tool: definition.name,
              message: "Calgate's database or cache did not answer; retrying the call once.",
            }),
        })
      : await run();
    logPartialResult(definition.name, raw, log);
    // Calendar text is screened here, for every tool: the structured answer and its text alike.
    const { answer: result, exposures } = readScreen(raw, options, parsed.data);
    if (exposures.length > 0) {
      await recordExposures(options, definition.name, exposures);
    }
    const events = (result as { events?: unknown }).events;
    if (Array.isArray(events)) {
      budget.spend('events', events.length);
    }
    // No answer passes ANSWER_TOKEN_LIMIT: read tools page, others say what they left out.
    const resumed = page === undefined ? undefined : resumeAfter(result, page, definition.name);
    const fitted = await fitAnswer({
      tool: definition.name,
      answer: resumed?.answer ?? result,
      render: definition.text
        ? (answer) => (definition.text as NonNullable<typeof definition.text>)(answer, parsed.data)
        : jsonOf,
      pageable: definition.annotations.readOnlyHint === true,
      digest: () => callDigest(callArgs, argsHash),
      before: resumed?.from ?? 0,
      inner: typeof callArgs.pageToken === 'string' ? callArgs.pageToken : undefined,
    });
    const { json, text } = fitted;
    const said = fitted.note === undefined ? notes : [fitted.note, ...notes];
    // The JSON text a 2026-07-28 client does not need (see structuredOnlyFor2026) is not sent.
    const repeated = definition.structuredOnlyFor2026 === true && options.era === 'modern' && text === json;
    budget.spend(
      'answerBytes',
      (fitted.jsonBytes ?? Buffer.byteLength(json)) +
        (repeated ? 0 : text === json ? json.length : Buffer.byteLength(text)),
    );
    if (said.length === 0) {
      return { content: repeated ? [] : [{ type: 'text', text }], structuredContent: fitted.answer };
    }
    return {
      content: [
        { type: 'text', text },
        { type: 'text', text: said.join(' ') },
      ],
      structuredContent: notes.length === 0 ? fitted.answer : { ...fitted.answer, deprecated: notes },
    };
  } catch (thrown) {
    const error = asUnavailable(thrown, definition.name, options.requestId);
    if (error instanceof CalgateError) {
      outcome = DENIED.has(error.code) ? 'denied' : 'error';
      errorCode = error.code;
      return errorResult(error.message);
    }
    outcome = 'error';
    errorCode = 'internal';
    options.onInternalError?.(error, definition.name);
    return errorResult(`Calgate failed to complete ${definition.name} (request ${options.requestId}).`);
  } finally {
    answering = false;
    release?.();
    options.onCall?.({
      tool: definition.name,
      calendarIds: [...options.access.touched],
      outcome,
      errorCode,
      latencyMs: Math.round(performance.now() - started),
      ...(changes.length === 0 ? {} : { target: changes }),
    });
  }
}

/** The person's confirmation for a risky call after exposure; every other call passes at once. */
async function guard(
  options: SessionOptions,
  tool: string,
  args: unknown,
  confirmation: string | undefined,
  elicit: Elicit | undefined,
): ReturnType<typeof guardAction> {
  const { confirmations, exposures, access } = options;
  if (confirmations === undefined || exposures === undefined || !RISKY_TOOLS.has(tool)) {
    return { ok: true };
  }
  const { principal } = access;
  const action = riskyAction(tool, args as Record<string, unknown>, insiders(principal));
  if (action === undefined) {
    return { ok: true };
  }
  return guardAction(
    {
      policy: principal.hijackPolicy ?? DEFAULT_HIJACK_POLICY,
      principal: `${principal.tenantId}:${principal.keyId}`,
      exposures,
      confirmations,
      calendars: access.list(),
      elicit,
      onDecision: options.onDecision,
      publicUrl: options.publicUrl,
    },
    action,
    argsHash(args),
    confirmation,
  );
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The common tools/call — a tool this key can use, plain arguments, no progress token, no task —
 * run without an MCP server object for the request: what the server would do for it (callTool),
 * without building that server, its handlers and its checks of the request and of the answer,
 * which callTool's answers always pass. Undefined for every other request: those go through
 * createMcpServer, which answers them (unknown or hidden tools, bad params, progress) as ever.
 * `options.logLevel` must be unset: this path sends no log messages.
 */
export function directToolCall(
  options: SessionOptions,
  params: unknown,
  signal: AbortSignal,
): Promise<CallToolResult> | undefined {
  if (!isPlainObject(params) || options.logLevel !== undefined) {
    return undefined;
  }
  const { name, arguments: args, _meta: meta, ...rest } = params;
  if (
    typeof name !== 'string' ||
    Object.keys(rest).length > 0 ||
    (args !== undefined && !isPlainObject(args)) ||
    (meta !== undefined && (!isPlainObject(meta) || Object.keys(meta).length > 0))
  ) {
    return undefined;
  }
  const entry = options.catalogue.get(name);
  if (
    entry === undefined ||
    !isVisible(entry, options.access) ||
    (options.canElicit && RISKY_TOOLS.has(name))
  ) {
    return undefined;
  }
  // callTool gives the call a budget of its own when the request brought none.
  return callTool(options, entry, args, signal);
}
