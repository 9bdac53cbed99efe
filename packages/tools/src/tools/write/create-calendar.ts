import { CalgateError } from '@calgate/core';
import { z } from 'zod';
import { defineTool } from '../../catalogue.ts';
import { TextScreen } from '../../firewall.ts';
import { sanitizedOut, timeZoneIn, writeCalendarId } from '../../write-schemas.ts';

export const createCalendar = defineTool({
  name: 'create_calendar',
  toolset: 'calendar',
  title: 'Create calendar',
  description: 'To make a new calendar (for a project, a trip); this key gets read and write on it.',
  notes:
    "Create a calendar on a local or Google OAuth account (not service-account ones: Google doesn't allow it) and give this key read and write on it. onAccountOf picks the account by one of its calendars.",
  access: 'write',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  input: z.strictObject({
    summary: z.string().min(1).max(256),
    description: z.string().max(4096).optional(),
    timeZone: timeZoneIn.optional().describe("IANA zone; default the account's."),
    onAccountOf: writeCalendarId.optional(),
  }),
  output: z.object({
    calendarId: z.string(),
    calendar: z.object({
      id: z.string(),
      summary: z.string(),
      timeZone: z.string(),
      accountEmail: z.string(),
      connectionKind: z.enum(['oauth', 'service_account', 'local', 'password']),
      canRead: z.boolean(),
      canWrite: z.boolean(),
    }),
    sanitized: sanitizedOut,
  }),
  exampleIntent: 'Make me a new calendar for the Lisbon trip.',
  example: { summary: 'Project Launch', timeZone: 'America/Los_Angeles' },
  exampleResult: { calendar: { summary: 'Project Launch', timeZone: 'America/Los_Angeles', canWrite: true } },
  async run(args, { access, directory }) {
    const screen = new TextScreen();
    const summary = screen.text('summary', args.summary);
    const description = screen.text('description', args.description);
    // The grant check happens here, in front of the directory: the key must write there.
    const account =
      args.onAccountOf === undefined ? undefined : access.writable(args.onAccountOf).calendar.id;
    if (directory === undefined) {
      throw new CalgateError('unavailable', 'Creating calendars is not available on this Calgate.');
    }
    const created = await directory.createCalendar({
      summary,
      ...(description === undefined ? {} : { description }),
      ...(args.timeZone === undefined ? {} : { timeZone: args.timeZone }),
      ...(account === undefined ? {} : { onAccountOf: account }),
    });
    return {
      calendarId: created.id,
      calendar: {
        id: created.id,
        summary: created.summary,
        timeZone: created.timeZone,
        accountEmail: created.accountEmail,
        connectionKind: created.auth === 'none' ? ('local' as const) : created.auth,
        canRead: created.canRead,
        canWrite: created.canWrite,
      },
      ...(screen.sanitized.length > 0 ? { sanitized: screen.sanitized } : {}),
    };
  },
});
