/**
 * Which tool calls destroy data or send it out of the person's organisation: the actions a
 * hijacked agent would be told to take, and so the ones that need the person's confirmation once
 * the agent has been shown flagged or outside-organised content (see confirm.ts).
 */

/** Whether an address belongs to the person's organisation (firewall/insiders.ts decides). */
export interface InsiderTest {
  includes(email: string): boolean;
}

/** A risky call as the person is asked about it. Built from the call's arguments only, never from calendar text. */
export interface RiskyAction {
  tool: string;
  /** The calendar named by the call (id, name or `primary` as given), when it named one. */
  calendarId?: string;
  /** What it will do, in one sentence without a trailing period: "delete event evt_1 (the whole series)". */
  does: string;
}

/** Every tool that can be risky; any other tool never is, so its calls skip the check entirely. */
export const RISKY_TOOLS: ReadonlySet<string> = new Set([
  'delete_event',
  'batch_update_events',
  'cancel_booking',
  'create_event',
  'update_event',
  'book_slot',
  'manage_attendees',
  'schedule_prompt_at',
  'schedule_prompt_cron',
  'schedule_prompt_every',
  'schedule_prompt_rrule',
  'schedule_prompt_around_events',
  'import_events',
]);

type Args = Record<string, unknown>;

// Long enough for Outlook's ids (base64 with `=` padding, 140-200 characters for occurrences).
const PLAIN_ID = /^[A-Za-z0-9._:@+#/=-]{1,256}$/;

/**
 * An id as the person may read it: ids come from the agent's arguments or from other people's
 * calendars, so anything but a plain id is not repeated (it could be words aimed at the person).
 */
export function plainId(value: string): string {
  return PLAIN_ID.test(value) ? value : `with an unusual id (${value.length} characters)`;
}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? plainId(value) : undefined);

function emails(value: unknown): string[] {
  return Array.isArray(value)
    ? value.filter((item): item is string => typeof item === 'string').map(plainId)
    : [];
}

/** Addresses outside the organisation; with no insiders known, every address is outside. */
function outside(addresses: readonly string[], insiders: InsiderTest | undefined): string[] {
  return addresses.filter((address) => insiders === undefined || !insiders.includes(address));
}

function list(addresses: readonly string[]): string {
  const shown = addresses.slice(0, 5).join(', ');
  return addresses.length > 5 ? `${shown} and ${addresses.length - 5} more` : shown;
}

function withCalendar(tool: string, args: Args, does: string): RiskyAction {
  const calendarId = str(args.calendarId);
  return calendarId === undefined ? { tool, does } : { tool, calendarId, does };
}

const SCOPES: Record<string, string> = {
  thisEvent: 'this occurrence only',
  thisAndFollowing: 'this and every following occurrence',
  all: 'the whole series',
};

function inviting(tool: string, args: Args, addresses: readonly string[], insiders: InsiderTest | undefined) {
  const strangers = outside(addresses, insiders);
  if (strangers.length === 0) {
    return undefined;
  }
  const event = str(args.eventId);
  const what = event === undefined ? 'a new event' : `event ${event}`;
  return withCalendar(tool, args, `invite ${list(strangers)} (outside your organisation) to ${what}`);
}

/**
 * The risky part of a call, or undefined when it has none. `args` are the validated arguments;
 * `insiders` the tenant's own addresses and domains (undefined: unknown, every address outside).
 */
export function riskyAction(
  tool: string,
  args: Args,
  insiders: InsiderTest | undefined,
): RiskyAction | undefined {
  switch (tool) {
    case 'delete_event': {
      const scope = SCOPES[str(args.scope) ?? ''];
      return withCalendar(
        tool,
        args,
        `delete event ${str(args.eventId)}${scope === undefined ? '' : ` (${scope})`}`,
      );
    }
    case 'batch_update_events': {
      const updates = Array.isArray(args.updates) ? (args.updates as Args[]) : [];
      const invited = updates.flatMap((update) => emails(update.attendees));
      const strangers = outside(invited, insiders);
      const to = strangers.length === 0 ? '' : `, inviting ${list(strangers)} (outside your organisation)`;
      return withCalendar(tool, args, `change ${updates.length} event(s) at once${to}`);
    }
    case 'cancel_booking':
      return {
        tool,
        does: `cancel booking ${str(args.bookingId) ?? `with idempotencyKey ${str(args.idempotencyKey)}`} and delete its event`,
      };
    case 'create_event':
    case 'update_event':
    case 'book_slot':
      return inviting(tool, args, emails(args.attendees), insiders);
    case 'manage_attendees':
      return inviting(tool, args, emails(args.addAttendees), insiders);
    case 'import_events': {
      // Fetching a URL the agent names sends its path and query to that host: a way out for data.
      if (typeof args.url !== 'string') {
        return undefined;
      }
      let host: string;
      try {
        host = plainId(new URL(args.url.replace(/^webcals?:/i, 'https:')).host);
      } catch {
        host = plainId(args.url);
      }
      return withCalendar(
        tool,
        args,
        `fetch a calendar from ${host}, sending it the address the agent chose`,
      );
    }
    default:
      if (RISKY_TOOLS.has(tool)) {
        // A schedule goes to the key's own agent unless the call names a target or agent itself.
        const target = str(args.targetId);
        const agent = str(args.agentId);
        if (target === undefined && agent === undefined) {
          return undefined;
        }
        const to = [
          target === undefined ? '' : `target ${target}`,
          agent === undefined ? '' : `agent ${agent}`,
        ]
          .filter((part) => part !== '')
          .join(', ');
        return { tool, does: `schedule prompts to be delivered to ${to}` };
      }
      return undefined;
  }
}
