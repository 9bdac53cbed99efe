import { type ColorPalette, standardPalette } from '@calgate/providers';
import { z } from 'zod';
import { defineTool } from '../../catalogue.ts';
import { calendarId } from '../../schemas.ts';

/** The names Google Calendar shows for event colours 1-11. */
const EVENT_COLOR_NAMES: Record<string, string> = {
  '1': 'Lavender',
  '2': 'Sage',
  '3': 'Grape',
  '4': 'Flamingo',
  '5': 'Banana',
  '6': 'Tangerine',
  '7': 'Peacock',
  '8': 'Graphite',
  '9': 'Blueberry',
  '10': 'Basil',
  '11': 'Tomato',
};

/** Google Calendar's palette, for when no calendar's provider can be asked. */
export const GOOGLE_PALETTE: ColorPalette = standardPalette();

const color = z.object({
  colorId: z.string(),
  name: z.string().optional(),
  background: z.string(),
  foreground: z.string(),
});

function entries(palette: ColorPalette['event'], names: Record<string, string>) {
  return Object.entries(palette)
    .sort(([a], [b]) => Number(a) - Number(b) || a.localeCompare(b))
    .map(([colorId, { background, foreground }]) => ({
      colorId,
      ...(names[colorId] === undefined ? {} : { name: names[colorId] }),
      background,
      foreground,
    }));
}

export const listColors = defineTool({
  name: 'list_colors',
  toolset: 'calendar',
  title: 'List colors',
  description: 'Only to colour an event or calendar: the colorId values and their names.',
  notes: "Colour ids for colorId on events (with Google's names) and calendars, from a calendar's provider.",
  access: 'read',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  input: z.strictObject({ calendarId: calendarId.optional().describe('Default: first readable.') }),
  output: z.object({
    calendarId: z.string().optional(),
    event: z.array(color),
    calendar: z.array(color),
  }),
  exampleIntent: 'Which colours can I give an event?',
  example: {},
  exampleResult: { event: [{ colorId: '5', name: 'Banana' }] },
  async run(args, { access, signal }) {
    const handle =
      args.calendarId === undefined ? access.allReadable().handles[0] : access.readable(args.calendarId);
    const palette = handle === undefined ? GOOGLE_PALETTE : await handle.provider.colors(signal);
    return {
      ...(handle === undefined ? {} : { calendarId: handle.calendar.id }),
      event: entries(palette.event, EVENT_COLOR_NAMES),
      calendar: entries(palette.calendar, {}),
    };
  },
});
