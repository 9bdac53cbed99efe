/**
 * tools/call on the full server: the tool the key may use (a hidden one answered with why),
 * progress and log messages on the request's stream, and the person asked before a risky action
 * (elicitation on the stream, or the call's input_required result), around callTool.
 */
import {
  type CallToolRequest,
  type CallToolResult,
  type ElicitRequestFormParams,
  type InputRequiredResult,
  inputRequired,
  ProtocolError,
  ProtocolErrorCode as RpcErrorCode,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { callTool, errorResult, isPlainObject, type ProgressReporter } from './call-tool.ts';
import type { CatalogueEntry } from './catalogue.ts';
import { jsonOf } from './format.ts';
import { argsHash, type Elicit } from './guard/confirm.ts';
import {
  askThroughResult,
  CONFIRM_INPUT,
  mintInputState,
  type PendingQuestion,
} from './guard/input-required.ts';
import { envelopeLogLevel } from './log-level.ts';
import { type LogLevel, logAtOrAbove } from './logging.ts';
import type { SessionOptions } from './server.ts';
import { hiddenMessage } from './visibility.ts';

/** How long a person has to answer an elicitation form before the dashboard decides instead. */
const ELICIT_TIMEOUT_MS = 5 * 60_000;

/**
 * Answers one tools/call of the request's server: `visible` are the tools the key may use,
 * `logLevel` the key's level as it stands when the call arrives.
 */
export function answerCallRequest(
  options: SessionOptions,
  visible: readonly CatalogueEntry[],
  logLevel: LogLevel | undefined,
  request: CallToolRequest,
  ctx: ServerContext,
): CallToolResult | Promise<CallToolResult | InputRequiredResult> {
  const entry = visible.find((candidate) => candidate.definition.name === request.params.name);
  if (entry === undefined) {
    const hidden = options.catalogue.entries.find(
      (candidate) => candidate.definition.name === request.params.name,
    );
    if (hidden !== undefined) {
      // A tool this key's toolsets or grants hide is a fixable permission problem, not a protocol error.
      options.onCall?.({
        tool: hidden.definition.name,
        calendarIds: [],
        outcome: 'denied',
        errorCode: 'permission_denied',
        latencyMs: 0,
      });
      return errorResult(hiddenMessage(hidden, options.access));
    }
    throw new ProtocolError(
      RpcErrorCode.InvalidParams,
      `Unknown tool '${request.params.name}'. Tools available to this key: ${visible.map((e) => e.definition.name).join(', ')}.`,
    );
  }
  const token = request.params._meta?.progressToken;
  const progress: ProgressReporter | undefined =
    token === undefined
      ? undefined
      : (done, total, message) =>
          ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: {
              progressToken: token,
              progress: done,
              ...(total === undefined ? {} : { total }),
              ...(message === undefined ? {} : { message }),
            },
          });
  // 2026-07-28 requests carry their own level (absent: no log messages); older clients set the key's.
  const level = options.era === 'modern' ? envelopeLogLevel(ctx) : logLevel;
  const log = logAtOrAbove(level, (params) => ctx.mcpReq.notify({ method: 'notifications/message', params }));
  // 2026-07-28: the question is this call's input_required result; the retry brings the answer.
  let question: PendingQuestion | undefined;
  const binding = {
    keyId: options.access.principal.keyId,
    tool: request.params.name,
    argsHash: argsHash(request.params.arguments ?? {}),
  };
  const now = options.now ?? (() => new Date());
  const inputStateKey = options.era === 'modern' ? options.inputStateKey : undefined;
  // Asked on this request's own stream; a client that cannot answer leaves it to the dashboard.
  const elicit: Elicit | undefined = !options.canElicit
    ? undefined
    : inputStateKey !== undefined
      ? askThroughResult({
          secret: inputStateKey,
          binding,
          now: now(),
          responses: ctx.mcpReq.inputResponses,
          state: ctx.mcpReq.requestState(),
          once: options.inputStates,
          ask: (asked) => {
            question = asked;
          },
        })
      : options.era === 'modern'
        ? undefined
        : (message, requestedSchema) =>
            // Sent as a plain request: the server of a stateless request never saw the client's
            // initialize, so elicitInput's capability check would refuse; the gateway checked it.
            ctx.mcpReq
              .send(
                {
                  method: 'elicitation/create',
                  params: {
                    message,
                    requestedSchema: requestedSchema as ElicitRequestFormParams['requestedSchema'],
                  },
                },
                { timeout: ELICIT_TIMEOUT_MS },
              )
              .then(
                (result) => ({
                  action: result.action,
                  ...(result.content === undefined ? {} : { content: result.content }),
                }),
                () => undefined,
              );
  const called = callTool(
    options,
    entry,
    request.params.arguments,
    ctx.mcpReq.signal,
    progress,
    request.params._meta,
    log,
    elicit,
  );
  const answer =
    inputStateKey === undefined
      ? called
      : called.then((result) =>
          question === undefined
            ? result
            : inputRequired({
                inputRequests: {
                  [CONFIRM_INPUT]: inputRequired.elicit({
                    message: question.message,
                    requestedSchema: question.requestedSchema as ElicitRequestFormParams['requestedSchema'],
                  }),
                },
                requestState: mintInputState(inputStateKey, binding, now()),
              }),
        );
  const { onAnswer } = options;
  if (onAnswer === undefined) {
    return answer;
  }
  return answer.then((result) => {
    const { structuredContent } = result;
    if (isPlainObject(structuredContent)) {
      // The same object the text was made from: jsonOf has its JSON already.
      onAnswer(ctx.mcpReq.id, structuredContent, jsonOf(structuredContent));
    }
    return result;
  });
}
