/**
 * Google Calendar's standard colour palette (what colors.get answers): event colours 1–11 and
 * calendar colours 1–24, as background colours in colorId order. Local calendars offer the same
 * ids, so a `colorId` means the same everywhere.
 */
export const COLOR_FOREGROUND = '#1d1d1d';

export const EVENT_COLOR_BACKGROUNDS: readonly string[] = Object.freeze([
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
]);

export const CALENDAR_COLOR_BACKGROUNDS: readonly string[] = Object.freeze([
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
]);
