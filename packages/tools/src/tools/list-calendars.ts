import { z } from 'zod';
import { defineTool } from '../catalogue.ts';

const calendarOut = z.object({
  id: z.string().describe('Calgate calendar id; pass it as calendarId to other tools.'),
  summary: z.string(),
  accountEmail: z.string(),
  connectionKind: z.enum(['oauth', 'service_account', 'local']),
  primary: z.boolean(),
  timeZone: z.string(),
  canRead: z.boolean(),
  canWrite: z.boolean(),
  enabled: z.boolean(),
  status: z.enum(['active', 'needs_reauth', 'disabled']),
});

export const listCalendars = defineTool({
  name: 'list_calendars',
  title: 'List calendars',
  description:
    'Every calendar this API key holds a grant on, across all connected accounts, with its Read/Write permission, whether it is enabled and which kind of connection backs it. Call it first to learn which calendarId values you can use.',
  access: 'none',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: z.strictObject({}),
  output: z.object({ calendars: z.array(calendarOut) }),
  example: {},
  async run(_args, { access }) {
    return {
      calendars: access.list().map((calendar) => ({
        id: calendar.id,
        summary: calendar.summary,
        accountEmail: calendar.accountEmail,
        connectionKind: calendar.auth === 'none' ? ('local' as const) : calendar.auth,
        primary: calendar.primary,
        timeZone: calendar.timeZone,
        canRead: calendar.canRead && calendar.enabled,
        canWrite: calendar.canWrite && calendar.enabled,
        enabled: calendar.enabled,
        status: calendar.connectionStatus,
      })),
    };
  },
});
