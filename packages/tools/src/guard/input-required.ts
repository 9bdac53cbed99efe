/**
 * The hijack guard's question for 2026-07-28 clients. That revision has no requests from server to
 * client; a call that needs the person's answer returns `input_required` with the form, and the
 * client retries the same call with the person's answer (`inputResponses`) and the opaque
 * `requestState` it was given. The state is Calgate's HMAC over the key, the tool, the call's
 * arguments and an expiry, so an answer counts only on a retry of exactly the call that asked,
 * by the key that was asked, within ten minutes; any other answer is asked again.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Elicit } from './confirm.ts';

/** The key of the guard's form in `inputRequests` and `inputResponses`. */
export const CONFIRM_INPUT = 'confirm';
/** How long a question stays answerable. */
export const INPUT_STATE_TTL_MS = 10 * 60_000;

/** What a question is bound to: who was asked about which exact call. */
export interface InputBinding {
  keyId: string;
  tool: string;
  argsHash: string;
}

function sign(secret: Uint8Array, payload: string): Buffer {
  return createHmac('sha256', secret).update(payload).digest();
}

/** A request state for this call, valid until `now + INPUT_STATE_TTL_MS`. */
export function mintInputState(secret: Uint8Array, binding: InputBinding, now: Date): string {
  const payload = Buffer.from(
    JSON.stringify({
      k: binding.keyId,
      t: binding.tool,
      h: binding.argsHash,
      e: now.getTime() + INPUT_STATE_TTL_MS,
    }),
  ).toString('base64url');
  return `${payload}.${sign(secret, payload).toString('base64url')}`;
}

/** Whether `state` was minted by this server for exactly this call and has not expired. */
export function inputStateMatches(
  secret: Uint8Array,
  state: unknown,
  binding: InputBinding,
  now: Date,
): boolean {
  if (typeof state !== 'string' || state.length > 1_000) {
    return false;
  }
  const [payload, mac, extra] = state.split('.');
  if (payload === undefined || mac === undefined || extra !== undefined) {
    return false;
  }
  const expected = sign(secret, payload);
  const given = Buffer.from(mac, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return false;
  }
  let claims: { k?: unknown; t?: unknown; h?: unknown; e?: unknown };
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as typeof claims;
  } catch {
    return false;
  }
  return (
    claims.k === binding.keyId &&
    claims.t === binding.tool &&
    claims.h === binding.argsHash &&
    typeof claims.e === 'number' &&
    claims.e > now.getTime()
  );
}

/** The question a call's answer must carry instead of running (see `askThroughResult`). */
export interface PendingQuestion {
  message: string;
  requestedSchema: Record<string, unknown>;
}

/**
 * The guard's `Elicit` for a 2026-07-28 call: the person's answer when the call is the retry of
 * the call that asked (the state matches) and carries an answer to the form; otherwise the
 * question is handed to `ask` (the handler answers `input_required` with it) and the guard told so.
 */
export function askThroughResult(input: {
  secret: Uint8Array;
  binding: InputBinding;
  now: Date;
  responses: Record<string, unknown> | undefined;
  state: unknown;
  ask: (question: PendingQuestion) => void;
}): Elicit {
  const response = input.responses?.[CONFIRM_INPUT] as { action?: unknown; content?: unknown } | undefined;
  const action = response?.action;
  const content = response?.content;
  type Answer = { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> };
  const answer: Answer | undefined =
    (action === 'accept' || action === 'decline' || action === 'cancel') &&
    inputStateMatches(input.secret, input.state, input.binding, input.now)
      ? typeof content === 'object' && content !== null && !Array.isArray(content)
        ? { action, content: content as Record<string, unknown> }
        : { action }
      : undefined;
  const elicit: Elicit = async (message, requestedSchema) => {
    if (answer !== undefined) {
      return answer;
    }
    input.ask({ message, requestedSchema });
    return 'input_required';
  };
  elicit.answersRetry = answer !== undefined;
  return elicit;
}
