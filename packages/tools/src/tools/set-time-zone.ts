import { CalgateError, formatInstant, utcOffsetMinutes, validateTimeZone } from '@calgate/core';
import { z } from 'zod';
import { defineTool } from '../catalogue.ts';
import { explainedOnce } from '../listed.ts';
import { formatOffset } from './read/current-time.ts';

/**
 * Sets the calling key's default time zone when the person says where they live. A key may set
 * its own zone (it changes how its own answers are written, nothing another key sees), so the
 * tool needs no calendar grant; the change is in the audit log as `timeZone=<zone>`.
 */
export const setTimeZone = defineTool({
  name: 'set_time_zone',
  toolset: 'calendar',
  title: 'Set time zone',
  description:
    "When the person says where they live or that times are off: makes that zone this key's default.",
  notes: "Sets this key's time zone to where the person lives: later answers use it.",
  access: 'none',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: z.strictObject({
    timeZone: explainedOnce(z.string().min(1).max(64), 'IANA, e.g. Europe/Berlin.'),
  }),
  output: z.object({
    timeZone: z.string(),
    previousTimeZone: z.string().optional(),
    dateTime: z.string(),
    utcOffset: z.string(),
  }),
  exampleIntent: 'I live in Berlin now; use my time zone from now on.',
  example: { timeZone: 'America/New_York' },
  exampleResult: { timeZone: 'America/New_York' },
  async run(args, { access, keySettings, audit, now }) {
    const checked = validateTimeZone(args.timeZone.trim());
    if (!checked.ok) {
      throw checked.error;
    }
    if (keySettings === undefined) {
      throw new CalgateError('unavailable', "This gateway cannot change a key's settings.");
    }
    const zone = checked.value;
    const { previous } = await keySettings.setTimeZone(zone);
    access.timeZoneChanged(zone);
    audit?.(`timeZone=${zone}`);
    const instant = Math.floor(now().getTime() / 1000) * 1000;
    return {
      timeZone: zone,
      ...(previous === null ? {} : { previousTimeZone: previous }),
      dateTime: formatInstant(instant, zone),
      utcOffset: formatOffset(utcOffsetMinutes(instant, zone)),
    };
  },
});
