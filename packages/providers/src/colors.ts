/**
 * Google Calendar's standard colour palette (colors.get): event colours 1–11 and calendar
 * colours 1–24. Local calendars offer the same ids, so a `colorId` means the same everywhere.
 */
import type { ColorDefinition, ColorPalette } from './types.ts';

const FOREGROUND = '#1d1d1d';

const EVENT_BACKGROUNDS = [
  '#a4bdfc',
  '#7ae7bf',
  '#dbadff',
  '#ff887c',
  '#fbd75b',
  '#ffb878',
  '#46d6db',
  '#e1e1e1',
  '#5484ed',
  '#51b749',
  '#dc2127',
] as const;

const CALENDAR_BACKGROUNDS = [
  '#ac725e',
  '#d06b64',
  '#f83a22',
  '#fa573c',
  '#ff7537',
  '#ffad46',
  '#42d692',
  '#16a765',
  '#7bd148',
  '#b3dc6c',
  '#fbe983',
  '#fad165',
  '#92e1c0',
  '#9fe1e7',
  '#9fc6e7',
  '#4986e7',
  '#9a9cff',
  '#b99aff',
  '#c2c2c2',
  '#cabdbf',
  '#cca6ac',
  '#f691b2',
  '#cd74e6',
  '#a47ae2',
] as const;

function palette(backgrounds: readonly string[]): Record<string, ColorDefinition> {
  return Object.fromEntries(
    backgrounds.map((background, i) => [String(i + 1), { background, foreground: FOREGROUND }]),
  );
}

/** A fresh copy each call, so a caller cannot change the shared palette. */
export function standardPalette(): ColorPalette {
  return { event: palette(EVENT_BACKGROUNDS), calendar: palette(CALENDAR_BACKGROUNDS) };
}
