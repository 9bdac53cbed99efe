/**
 * GET /icons/{name}.svg and .png: Calgate's icon and its toolsets' (MCP SEP-973), as named in
 * server info and the tool reference (see iconsOf). One drawing — a calendar page — in each
 * toolset's colour; the PNG is drawn from the same shapes when the gateway starts.
 */
import { crc32, deflateSync } from 'node:zlib';
import { ICON_NAMES, ICON_PNG_SIZE, type IconName } from '@calgate/tools';
import type { FastifyInstance } from 'fastify';
import { errorBody } from './errors.ts';

const COLOURS: Record<IconName, string> = {
  calgate: '#2f5fd0',
  calendar: '#2f8f5b',
  booking: '#c4631b',
  search: '#6b4fc8',
  rules: '#a23b72',
  scheduler: '#1f7f99',
  ics: '#5c6670',
};

/** Rectangles of the drawing on a 64-unit square: [x, y, width, height]. */
const PAGE: [number, number, number, number] = [12, 16, 40, 36];
const HEADER: [number, number, number, number] = [12, 16, 40, 9];
const RINGS: [number, number, number, number][] = [
  [20, 10, 5, 10],
  [39, 10, 5, 10],
];
const CELLS: [number, number, number, number][] = [0, 1, 2].flatMap((row) =>
  [0, 1, 2].map((column) => [17 + column * 11, 29 + row * 7, 8, 5] as [number, number, number, number]),
);

function svgOf(name: IconName): string {
  const rect = ([x, y, w, h]: [number, number, number, number], fill: string) =>
    `<rect x="${x}" y="${y}" width="${w}" height="${h}" fill="${fill}"/>`;
  const colour = COLOURS[name];
  return [
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64">',
    `<title>Calgate${name === 'calgate' ? '' : ` ${name}`}</title>`,
    `<rect width="64" height="64" rx="12" fill="${colour}"/>`,
    rect(PAGE, '#ffffff'),
    rect(HEADER, '#1b1f24'),
    ...RINGS.map((ring) => rect(ring, '#1b1f24')),
    ...CELLS.map((cell) => rect(cell, colour)),
    '</svg>',
  ].join('');
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

function rgb(hex: string): [number, number, number] {
  return [1, 3, 5].map((at) => Number.parseInt(hex.slice(at, at + 2), 16)) as [number, number, number];
}

/** The same drawing as an RGBA PNG of ICON_PNG_SIZE pixels (the rounded corners transparent). */
function pngOf(name: IconName): Buffer {
  const size = ICON_PNG_SIZE;
  const colour = rgb(COLOURS[name]);
  const inside = (x: number, y: number, [rx, ry, w, h]: [number, number, number, number]) =>
    x >= rx && x < rx + w && y >= ry && y < ry + h;
  const corner = (x: number, y: number) => {
    const r = 12;
    const cx = x < r ? r : x >= size - r ? size - r - 1 : x;
    const cy = y < r ? r : y >= size - r ? size - r - 1 : y;
    return (x - cx) ** 2 + (y - cy) ** 2 > r * r;
  };
  const rows: Buffer[] = [];
  for (let y = 0; y < size; y++) {
    const row = Buffer.alloc(1 + size * 4);
    for (let x = 0; x < size; x++) {
      let pixel: [number, number, number] = colour;
      if (CELLS.some((cell) => inside(x, y, cell))) {
        pixel = colour;
      } else if (inside(x, y, HEADER) || RINGS.some((ring) => inside(x, y, ring))) {
        pixel = [0x1b, 0x1f, 0x24];
      } else if (inside(x, y, PAGE)) {
        pixel = [0xff, 0xff, 0xff];
      }
      row.set([...pixel, corner(x, y) ? 0 : 0xff], 1 + x * 4);
    }
    rows.push(row);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 6, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

export function registerIconRoutes(app: FastifyInstance): void {
  const files = new Map<string, { type: string; body: Buffer }>();
  for (const name of ICON_NAMES) {
    files.set(`${name}.svg`, { type: 'image/svg+xml', body: Buffer.from(svgOf(name)) });
    files.set(`${name}.png`, { type: 'image/png', body: pngOf(name) });
  }
  app.get<{ Params: { file: string } }>('/icons/:file', async (request, reply) => {
    const file = files.get(request.params.file);
    if (file === undefined) {
      return reply
        .status(404)
        .send(
          errorBody(
            'not_found',
            `No icon '${request.params.file.slice(0, 100)}'. Icons: ${[...files.keys()].join(', ')}.`,
            request.id,
          ),
        );
    }
    // Icons never change within a version; clients may keep them a day.
    return reply
      .header('content-type', file.type)
      .header('cache-control', 'public, max-age=86400')
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
      .send(file.body);
  });
}
