/**
 * The hijack guard's question for 2026-07-28 clients. That revision has no requests from server to
 * client; a call that needs the person's answer returns `input_required` with the form, and the
 * client retries the same call with the person's answer (`inputResponses`) and the opaque
 * `requestState` it was given. The state is Calgate's HMAC over the key, the tool, the call's
 * arguments, an expiry and a nonce, so an answer counts only on a retry of exactly the call that
 * asked, by the key that was asked, within ten minutes; any other answer is asked again. The
 * nonce is claimed in a ledger shared by the gateways (Redis) when the answer is used, so each
 * state allows one call: sent again it is refused, and so is any state while the ledger cannot
 * answer (a second use could not be ruled out).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { MemoryOnceLedger, type OnceLedger } from '@calgate/locks';
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
      n: randomBytes(16).toString('base64url'),
    }),
  ).toString('base64url');
  return `${payload}.${sign(secret, payload).toString('base64url')}`;
}

/** A state's nonce (its one use) and when it stops counting (epoch ms). */
export interface InputStateClaims {
  nonce: string;
  expiresAt: number;
}

/** The claims of `state` when it was minted by this server for exactly this call and has not expired. */
export function verifyInputState(
  secret: Uint8Array,
  state: unknown,
  binding: InputBinding,
  now: Date,
): InputStateClaims | undefined {
  if (typeof state !== 'string' || state.length > 1_000) {
    return undefined;
  }
  const [payload, mac, extra] = state.split('.');
  if (payload === undefined || mac === undefined || extra !== undefined) {
    return undefined;
  }
  const expected = sign(secret, payload);
  const given = Buffer.from(mac, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return undefined;
  }
  let claims: { k?: unknown; t?: unknown; h?: unknown; e?: unknown; n?: unknown };
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as typeof claims;
  } catch {
    return undefined;
  }
  return claims.k === binding.keyId &&
    claims.t === binding.tool &&
    claims.h === binding.argsHash &&
    typeof claims.e === 'number' &&
    claims.e > now.getTime() &&
    typeof claims.n === 'string' &&
    claims.n.length > 0
    ? { nonce: claims.n, expiresAt: claims.e }
    : undefined;
}

/** Whether `state` was minted by this server for exactly this call and has not expired. */
export function inputStateMatches(
  secret: Uint8Array,
  state: unknown,
  binding: InputBinding,
  now: Date,
): boolean {
  return verifyInputState(secret, state, binding, now) !== undefined;
}

/** Why an answer with a genuine state does not count, in the sentence the agent is given. */
export function usedStateMessage(tool: string, why: 'used' | 'unavailable'): string {
  return why === 'used'
    ? `${tool} was not run: the person's answer sent with this call (its requestState) was used already, and each answer allows one call only. Repeat the call without inputResponses and requestState to ask the person again.`
    : `${tool} was not run: Calgate cannot check just now that the person's answer sent with this call (its requestState) was not used already, because its shared store (Redis) does not answer, so the answer does not count. Try again in a few seconds.`;
}

/** States used on this process, when no shared ledger is given. */
const PROCESS_LEDGER = new MemoryOnceLedger();

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
  /** Where each state's nonce is claimed when its answer is used (shared by the gateways); this process's own when absent. */
  once?: OnceLedger | undefined;
  ask: (question: PendingQuestion) => void;
}): Elicit {
  const response = input.responses?.[CONFIRM_INPUT] as { action?: unknown; content?: unknown } | undefined;
  const action = response?.action;
  const content = response?.content;
  type Answer = { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> };
  const claims =
    action === 'accept' || action === 'decline' || action === 'cancel'
      ? verifyInputState(input.secret, input.state, input.binding, input.now)
      : undefined;
  const answer: Answer | undefined =
    claims !== undefined && (action === 'accept' || action === 'decline' || action === 'cancel')
      ? typeof content === 'object' && content !== null && !Array.isArray(content)
        ? { action, content: content as Record<string, unknown> }
        : { action }
      : undefined;
  const elicit: Elicit = async (message, requestedSchema) => {
    if (answer !== undefined && claims !== undefined) {
      // One use per state, whatever the answer: claimed before the call may run.
      const claimed = await (input.once ?? PROCESS_LEDGER)
        .claim(claims.nonce, claims.expiresAt - input.now.getTime())
        .catch(() => 'unavailable' as const);
      return claimed === 'first' ? answer : { refused: usedStateMessage(input.binding.tool, claimed) };
    }
    input.ask({ message, requestedSchema });
    return 'input_required';
  };
  elicit.answersRetry = answer !== undefined;
  return elicit;
}
