/**
 * Google Calendar's standard colour palette (colors.get): event colours 1–11 and calendar
 * colours 1–24. Local calendars offer the same ids, so a `colorId` means the same everywhere.
 */
import { CALENDAR_COLOR_BACKGROUNDS, COLOR_FOREGROUND, EVENT_COLOR_BACKGROUNDS } from '@calgate/core';
import type { ColorDefinition, ColorPalette } from './types.ts';

function palette(backgrounds: readonly string[]): Record<string, ColorDefinition> {
  return Object.fromEntries(
    backgrounds.map((background, i) => [String(i + 1), { background, foreground: COLOR_FOREGROUND }]),
  );
}

/** A fresh copy each call, so a caller cannot change the shared palette. */
export function standardPalette(): ColorPalette {
  return { event: palette(EVENT_COLOR_BACKGROUNDS), calendar: palette(CALENDAR_COLOR_BACKGROUNDS) };
}
