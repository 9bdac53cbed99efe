import { z } from 'zod';
import { readOnlyUpstream } from '../access.ts';
import { defineTool } from '../catalogue.ts';

const calendarOut = z.object({
  id: z.string().describe('Calgate calendar id; pass it as calendarId to other tools.'),
  summary: z.string(),
  accountEmail: z.string(),
  connectionKind: z.enum(['oauth', 'service_account', 'local', 'password']),
  provider: z.string(),
  primary: z.boolean(),
  default: z.boolean().describe("The key's default calendar, meant by calendarId 'primary'."),
  timeZone: z.string(),
  canRead: z.boolean(),
  canWrite: z.boolean(),
  enabled: z.boolean(),
  status: z.enum(['active', 'needs_reauth', 'disabled']),
});

/** What a key without any grant is told, with both ways to give it one. */
function noGrantsMessage(keyId: string): string {
  return `This key has no calendar grants yet. In the Calgate dashboard, open Permissions and tick Read (or Write) for this key on a calendar, or run \`calgate grant --key ${keyId} --calendar <calendar id> --read\`.`;
}

export const listCalendars = defineTool({
  name: 'list_calendars',
  toolset: 'calendar',
  title: 'List calendars',
  description: 'Start here: which calendars this key can see and write to, across accounts, with their ids.',
  notes:
    'Every calendar this API key holds a grant on, across all connected accounts, with its Read/Write permission, whether it is enabled and which kind of connection backs it. Call it first to learn which calendarId values you can use.',
  access: 'none',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: z.strictObject({}),
  output: z.object({
    calendars: z.array(calendarOut),
    message: z.string().optional().describe('Why the list is empty and how to fix it.'),
  }),
  exampleIntent: 'Which calendars can you see, and which of them can you write to?',
  example: {},
  exampleResult: {
    calendars: [
      { summary: 'Calgate', primary: true, default: true, timeZone: 'America/New_York', canWrite: true },
    ],
  },
  async run(_args, { access }) {
    const chosen = access.defaultCalendar();
    const calendars = access.list().map((calendar) => ({
      id: calendar.id,
      summary: calendar.summary,
      accountEmail: calendar.accountEmail,
      connectionKind: calendar.auth === 'none' ? ('local' as const) : calendar.auth,
      provider: calendar.provider,
      primary: calendar.primary,
      default: calendar.id === chosen?.id,
      timeZone: calendar.timeZone,
      canRead: calendar.canRead && calendar.enabled,
      canWrite: calendar.canWrite && calendar.enabled && !readOnlyUpstream(calendar),
      enabled: calendar.enabled,
      status: calendar.connectionStatus,
    }));
    return calendars.length === 0
      ? { calendars, message: noGrantsMessage(access.principal.keyId) }
      : { calendars };
  },
});
