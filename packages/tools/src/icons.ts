/**
 * Icons (MCP SEP-973) of Calgate and of its toolsets, served by the gateway under `/icons/`: an
 * SVG for clients that draw vectors and a 64×64 PNG, the format every client that shows icons
 * must read. Calgate's own icon goes in its server info (initialize, server/discover); a tool's
 * icon is its toolset's, given with the tool in the calgate://docs/tools reference, not in
 * tools/list, whose size every agent pays for on every connection.
 */
import type { Icon } from '@modelcontextprotocol/server';
import type { Toolset } from './catalogue.ts';

export type IconName = 'calgate' | Toolset;

export const ICON_NAMES: readonly IconName[] = [
  'calgate',
  'calendar',
  'booking',
  'search',
  'rules',
  'scheduler',
  'ics',
];

export const ICON_PNG_SIZE = 64;

/** The icons of `name` as served by the gateway at `publicUrl`. */
export function iconsOf(publicUrl: string | undefined, name: IconName): Icon[] {
  if (publicUrl === undefined) {
    return [];
  }
  return [
    { src: `${publicUrl}/icons/${name}.svg`, mimeType: 'image/svg+xml', sizes: ['any'] },
    {
      src: `${publicUrl}/icons/${name}.png`,
      mimeType: 'image/png',
      sizes: [`${ICON_PNG_SIZE}x${ICON_PNG_SIZE}`],
    },
  ];
}
