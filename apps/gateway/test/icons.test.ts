/**
 * Icons (SEP-973) and titles: Calgate's icon in its server info for both revisions (initialize and
 * server/discover), icons on resources, templates and prompts, each tool's toolset icon in the
 * calgate://docs/tools reference (not in tools/list, which must stay small), a title on every
 * tool, prompt, resource and template, and the icons themselves served by the gateway.
 */
import { inflateSync } from 'node:zlib';
import { ICON_NAMES } from '@calgate/tools';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, connectClient2026, startTestGateway, type TestGateway } from './harness.ts';

const PUBLIC_URL = 'http://calgate.test';
const CALGATE_ICONS = [
  { src: `${PUBLIC_URL}/icons/calgate.svg`, mimeType: 'image/svg+xml', sizes: ['any'] },
  { src: `${PUBLIC_URL}/icons/calgate.png`, mimeType: 'image/png', sizes: ['64x64'] },
];

let gw: TestGateway;
let secret: string;
const clients: { close(): Promise<void> }[] = [];

/** An icon's address as this test reaches the gateway. */
const local = (src: string) => `${gw.url}${new URL(src).pathname}`;

beforeAll(async () => {
  gw = await startTestGateway();
  const owner = await gw.seedTenant('Icons');
  secret = owner.secret;
  const work = await gw.localCalendar(owner.tenantId, 'Work');
  await gw.grant(owner.tenantId, owner.keyId, work, { read: true, write: true });
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await gw?.stop();
});

describe('icons and titles', () => {
  it('serves every icon as SVG and as a 64×64 PNG; an unknown icon is a 404 naming the icons', async () => {
    for (const name of ICON_NAMES) {
      const svg = await fetch(`${gw.url}/icons/${name}.svg`);
      expect(svg.status, name).toBe(200);
      expect(svg.headers.get('content-type')).toBe('image/svg+xml');
      expect(svg.headers.get('cache-control')).toBe('public, max-age=86400');
      expect(await svg.text()).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" viewBox="0 0 64 64"/);
      const png = await fetch(`${gw.url}/icons/${name}.png`);
      expect(png.status, name).toBe(200);
      expect(png.headers.get('content-type')).toBe('image/png');
      const bytes = Buffer.from(await png.arrayBuffer());
      expect(bytes.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      expect(bytes.subarray(12, 16).toString('latin1')).toBe('IHDR');
      expect([bytes.readUInt32BE(16), bytes.readUInt32BE(20)]).toEqual([64, 64]);
      // The pixels decode: 64 rows of a filter byte and 64 RGBA pixels.
      const idat = bytes.indexOf('IDAT', 0, 'latin1');
      const length = bytes.readUInt32BE(idat - 4);
      expect(inflateSync(bytes.subarray(idat + 4, idat + 4 + length))).toHaveLength(64 * (1 + 64 * 4));
    }
    const missing = await fetch(`${gw.url}/icons/calgate.gif`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { message: string } }).error.message).toMatch(
      /^No icon 'calgate\.gif'\. Icons: calgate\.svg, calgate\.png, /,
    );
  });

  it('gives Calgate’s icons in the server info of both revisions', async () => {
    const legacy = await connectClient(gw.mcpUrl, secret);
    clients.push(legacy);
    expect(legacy.getServerVersion()).toMatchObject({
      name: 'calgate',
      title: 'Calgate',
      icons: CALGATE_ICONS,
    });
    const modern = await connectClient2026(gw.mcpUrl, secret);
    clients.push(modern);
    expect(modern.getServerVersion()).toMatchObject({
      name: 'calgate',
      title: 'Calgate',
      icons: CALGATE_ICONS,
    });
    for (const icon of CALGATE_ICONS) {
      expect((await fetch(local(icon.src))).headers.get('content-type')).toBe(icon.mimeType);
    }
  });

  for (const revision of ['2025-11-25', '2026-07-28'] as const) {
    it(`titles every tool, prompt, resource and template; icons beside all but tools (${revision})`, async () => {
      const client =
        revision === '2025-11-25'
          ? await connectClient(gw.mcpUrl, secret)
          : await connectClient2026(gw.mcpUrl, secret);
      clients.push(client);
      const { tools } = await client.listTools();
      expect(tools.length).toBeGreaterThan(10);
      for (const tool of tools) {
        expect(tool.title, tool.name).toBeTruthy();
        // tools/list stays within its token budget: tool icons are in the reference instead.
        expect(tool.icons, tool.name).toBeUndefined();
      }
      const { prompts } = await client.listPrompts();
      expect(prompts.length).toBeGreaterThan(0);
      const { resources } = await client.listResources();
      expect(resources.map((resource) => resource.name)).toContain('Work');
      const { resourceTemplates } = await client.listResourceTemplates();
      expect(resourceTemplates.length).toBeGreaterThan(0);
      for (const item of [...prompts, ...resources, ...resourceTemplates]) {
        expect(item.title, item.name).toBeTruthy();
        expect(
          item.icons?.map((icon) => icon.mimeType),
          item.name,
        ).toEqual(['image/svg+xml', 'image/png']);
      }
      const calendar = resources.find((resource) => resource.name === 'Work');
      expect(calendar?.icons?.[1]?.src).toBe(`${PUBLIC_URL}/icons/calendar.png`);

      const read = await client.readResource({ uri: 'calgate://docs/tools' });
      const doc = JSON.parse((read.contents[0] as { text: string }).text) as {
        tools: { name: string; toolset: string; icons: { src: string }[] }[];
      };
      expect(doc.tools.map((tool) => tool.name).sort()).toEqual(tools.map((tool) => tool.name).sort());
      for (const tool of doc.tools) {
        expect(tool.icons.map((icon) => icon.src)).toEqual([
          `${PUBLIC_URL}/icons/${tool.toolset}.svg`,
          `${PUBLIC_URL}/icons/${tool.toolset}.png`,
        ]);
        expect((await fetch(local(tool.icons[1]?.src ?? ''))).status).toBe(200);
      }
    });
  }
});
