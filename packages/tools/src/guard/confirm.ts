/**
 * The gateway's stop for a hijacked agent: once a principal's agent has been shown flagged or
 * outside-organised content (its ExposureLog), a risky action (risky.ts) runs only with the
 * person's confirmation — asked through MCP elicitation, or given in the dashboard and then
 * presented by the agent as a one-use `confirmation` id bound to this key, tool and arguments.
 * The agent can never approve by itself: approval needs the person's dashboard session or the
 * person's answer in the client's own form.
 */
import { createHash } from 'node:crypto';
import type { Exposure, ExposureLog } from '@calgate/locks';
import type { KeyCalendar } from '../access.ts';
import { plainId, type RiskyAction } from './risky.ts';

/** Calgate's own reasons and plain addresses; anything else from a calendar is not repeated. */
const PLAIN_DETAIL = /^[A-Za-z0-9 ._:@+'’()[\]-]{1,200}$/;

function plainDetail(exposure: Exposure): string {
  if (PLAIN_DETAIL.test(exposure.detail)) {
    return exposure.detail;
  }
  return exposure.kind === 'outside_organizer' ? 'organised by an unusual address' : 'a field was withheld';
}

/** strict: always the dashboard; ask: the client's form when it has one, else the dashboard; off: no checks. */
export type HijackPolicy = 'strict' | 'ask' | 'off';
export const HIJACK_POLICIES: readonly HijackPolicy[] = ['strict', 'ask', 'off'];
export const DEFAULT_HIJACK_POLICY: HijackPolicy = 'ask';

/** What presenting a confirmation id found. */
export type ConfirmationUse = 'ok' | 'pending' | 'declined' | 'used' | 'mismatch' | 'unknown';

/** Confirmations given in the dashboard, bound to one key (the gateway keeps them in Postgres). */
export interface ConfirmationStore {
  /** A pending confirmation for exactly this call; the person approves or declines it in the dashboard. */
  create(input: {
    tool: string;
    argsHash: string;
    calendarIds: string[];
    action: string;
    preceded: string[];
  }): Promise<{ id: string; expiresAt: Date }>;
  /** Consumes an approved confirmation of this key for this tool and arguments ('ok' once only). */
  use(id: string, tool: string, argsHash: string): Promise<ConfirmationUse>;
}

export type Decision = 'asked' | 'accepted' | 'declined' | 'refused' | 'used';

/** One decision, for the audit log: ids and tool names only, never calendar text. */
export interface DecisionRecord {
  decision: Decision;
  tool: string;
  calendarIds: string[];
  confirmationId?: string;
}

/**
 * The person's answer to an elicitation form; undefined when the client could not ask;
 * 'input_required' when the question goes back to a 2026-07-28 client as the call's result and
 * the answer comes with its retry (see input-required.ts); `refused` when that answer came with
 * a state used already (or whose use cannot be checked), in the sentence the agent is given.
 */
export type Elicit = ((
  message: string,
  requestedSchema: Record<string, unknown>,
) => Promise<
  | { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> }
  | 'input_required'
  | { refused: string }
  | undefined
>) & {
  /** The answer comes with a retry of a call that was asked already (and recorded as asked then). */
  answersRetry?: boolean;
};

export interface GuardOptions {
  policy: HijackPolicy;
  principal: string;
  exposures: ExposureLog;
  confirmations: ConfirmationStore;
  calendars: readonly KeyCalendar[];
  /** Present when the client declared form elicitation and the call travels where it can be asked. */
  elicit?: Elicit | undefined;
  onDecision?: ((record: DecisionRecord) => void) | undefined;
  publicUrl?: string | undefined;
}

export type GuardVerdict =
  | { ok: true }
  | { ok: false; code: 'confirmation_required' | 'declined' | 'input_required'; message: string };

/** A stable digest of validated arguments: the same call, however its keys are ordered, has one hash. */
export function argsHash(args: unknown): string {
  const canonical = (value: unknown): unknown => {
    if (Array.isArray(value)) {
      return value.map(canonical);
    }
    if (typeof value === 'object' && value !== null && !(value instanceof Date)) {
      return Object.fromEntries(
        Object.keys(value)
          .sort()
          .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
          .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
      );
    }
    return value;
  };
  return createHash('sha256')
    .update(JSON.stringify(canonical(args)))
    .digest('base64url');
}

function calendarName(calendarId: string, calendars: readonly KeyCalendar[]): string {
  const calendar = calendars.find((candidate) => candidate.id === calendarId);
  return calendar === undefined
    ? `calendar ${calendarId}`
    : `calendar '${calendar.summary}' (${calendar.id})`;
}

/** "delete event evt_2 in calendar 'Work' (cal_1)". */
export function describeAction(action: RiskyAction, calendars: readonly KeyCalendar[]): string {
  return action.calendarId === undefined
    ? action.does
    : `${action.does} in ${calendarName(action.calendarId, calendars)}`;
}

/** What preceded the action, one line per event (newest first, at most five): ids and reasons, never the text. */
export function describeExposures(
  exposures: readonly Exposure[],
  calendars: readonly KeyCalendar[],
): string[] {
  const lines: string[] = [];
  for (const exposure of exposures) {
    const where =
      exposure.calendarId === '' ? '' : ` in ${calendarName(plainId(exposure.calendarId), calendars)}`;
    const detail = plainDetail(exposure);
    const what = exposure.kind === 'outside_organizer' ? `${detail}, outside your organisation` : detail;
    const line = `event ${plainId(exposure.eventId)}${where} (shown by ${exposure.tool}): ${what}`;
    if (!lines.includes(line)) {
      lines.push(line);
    }
  }
  return lines.slice(0, 5);
}

const FORM = {
  type: 'object',
  properties: {
    allow: { type: 'boolean', title: 'Allow this action once', default: false },
  },
  required: ['allow'],
};

function hhmm(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

const USE_MESSAGES: Record<Exclude<ConfirmationUse, 'ok'>, (id: string, tool: string) => string> = {
  pending: (id, tool) =>
    `${tool} was not run: confirmation ${id} has not been approved in the Calgate dashboard yet. Ask the person to approve it there, then repeat the call with it.`,
  declined: (id, tool) =>
    `${tool} was not run: the person declined confirmation ${id} in the Calgate dashboard. Do not retry; tell the person it was not done.`,
  used: (id, tool) =>
    `${tool} was not run: confirmation ${id} was already used, and each confirmation works for one call only. Repeat the call without it to ask the person again.`,
  mismatch: (id, tool) =>
    `${tool} was not run: confirmation ${id} was given for a different call (another tool or other arguments) and works only for exactly that call. Repeat that call unchanged, or repeat this one without it to ask the person again.`,
  unknown: (id, tool) =>
    `${tool} was not run: confirmation ${id} is unknown or has expired. Repeat the call without it to ask the person again.`,
};

/**
 * Decides whether a risky call may run. A `confirmation` id is always checked (the policy off
 * aside); otherwise a principal with no recent exposure runs as ever, one with exposure is asked
 * (policy ask, client with a form) or refused with a dashboard confirmation to present.
 */
export async function guardAction(
  options: GuardOptions,
  action: RiskyAction,
  hash: string,
  confirmation: string | undefined,
): Promise<GuardVerdict> {
  if (options.policy === 'off') {
    return { ok: true };
  }
  const calendarIds = action.calendarId === undefined ? [] : [action.calendarId];
  const decide = (decision: Decision, confirmationId?: string) =>
    options.onDecision?.({
      decision,
      tool: action.tool,
      calendarIds,
      ...(confirmationId === undefined ? {} : { confirmationId }),
    });
  if (confirmation !== undefined) {
    const use = await options.confirmations.use(confirmation, action.tool, hash);
    if (use === 'ok') {
      decide('used', confirmation);
      return { ok: true };
    }
    return {
      ok: false,
      code: 'confirmation_required',
      message: USE_MESSAGES[use](confirmation, action.tool),
    };
  }
  const exposures = await options.exposures.recent(options.principal);
  if (exposures.length === 0) {
    return { ok: true };
  }
  const does = describeAction(action, options.calendars);
  const preceded = describeExposures(exposures, options.calendars);
  if (options.policy === 'ask' && options.elicit !== undefined) {
    if (options.elicit.answersRetry !== true) {
      decide('asked');
    }
    const message = [
      `Your AI assistant wants to ${does} (tool ${action.tool}).`,
      'Shortly before, it was shown calendar content that may carry instructions it should not follow:',
      ...preceded.map((line) => `- ${line}`),
      'Allow this action once?',
    ].join('\n');
    const answer = await options.elicit(message, FORM);
    if (answer === 'input_required') {
      // Not run this round: the client asks the person and retries the call with the answer.
      return {
        ok: false,
        code: 'input_required',
        message: `${action.tool} was not run yet: Calgate asked the person to allow "${does}".`,
      };
    }
    if (answer !== undefined && 'refused' in answer) {
      return { ok: false, code: 'confirmation_required', message: answer.refused };
    }
    if (answer !== undefined) {
      if (answer.action === 'accept' && answer.content?.allow === true) {
        decide('accepted');
        return { ok: true };
      }
      decide('declined');
      return {
        ok: false,
        code: 'declined',
        message: `${action.tool} was not run: the person did not allow "${does}" when Calgate asked, because this agent was recently shown content that may carry instructions. Do not retry; tell the person it was not done.`,
      };
    }
    // The client could not ask after all (no answer, an error): the dashboard decides instead.
  }
  const pending = await options.confirmations.create({
    tool: action.tool,
    argsHash: hash,
    calendarIds,
    action: does,
    preceded,
  });
  decide('refused', pending.id);
  const where =
    options.publicUrl === undefined
      ? 'the Calgate dashboard, under "Waiting for confirmation"'
      : `the Calgate dashboard (${options.publicUrl}/keys, under "Waiting for confirmation")`;
  const more = preceded.length > 1 ? `, and ${preceded.length - 1} more` : '';
  return {
    ok: false,
    code: 'confirmation_required',
    message: `${action.tool} was not run: "${does}" needs the person's confirmation, because this agent was recently shown calendar content that may carry instructions (${preceded[0]}${more}). Confirm in the Calgate dashboard or repeat with confirmation: ask the person to approve ${pending.id} in ${where}, then repeat exactly the same call with the extra argument confirmation: "${pending.id}". It works once, for this call only, until ${hhmm(pending.expiresAt)}.`,
  };
}
