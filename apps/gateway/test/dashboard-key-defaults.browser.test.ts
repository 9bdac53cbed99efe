import type { GoogleEmulator } from '@calgate/google-emulator';
import type { Client } from '@modelcontextprotocol/client';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectGoogle, createKey, openDashboard, screenshot } from './browser.ts';
import { startGatewayWithGoogle } from './google-fixture.ts';
import { connectClient, type TestGateway, textOf } from './harness.ts';

const CLIENT = { clientId: 'calgate-defaults.apps.googleusercontent.com', clientSecret: 'defaults-secret' };
const ANN = 'ann@example.com';
const TEAM = 'team@group.calendar.google.com';

async function tool(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, textOf(result)).toBeFalsy();
  return result.structuredContent as Record<string, unknown>;
}

async function defaultOf(client: Client): Promise<string[]> {
  const { calendars } = (await tool(client, 'list_calendars')) as {
    calendars: { summary: string; default: boolean }[];
  };
  return calendars.filter((calendar) => calendar.default).map((calendar) => calendar.summary);
}

describe('the dashboard in Chromium: a key’s default calendar and time zone', () => {
  let emulator: GoogleEmulator;
  let gw: TestGateway;
  let browser: Browser;
  let page: Page;
  let client: Client;

  beforeAll(async () => {
    const started = await startGatewayWithGoogle(CLIENT, {
      accounts: [{ email: ANN, timeZone: 'Europe/Berlin', calendars: [{ id: TEAM, summary: 'Team' }] }],
    });
    ({ emulator, gw } = started);
    // A workspace zone other than the Google calendar's, to tell which one a key falls back to.
    ({ browser, page } = await openDashboard(gw, { timeZone: 'America/Sao_Paulo' }));
    const secret = await createKey(page, 'agent');
    await connectGoogle(page, ANN);
    client = await connectClient(gw.mcpUrl, secret);
  });

  /** The API keys page, loaded afresh (the OAuth callback's page has no dashboard navigation). */
  async function keysPage(): Promise<void> {
    await page.goto(`${gw.url}/keys`);
    await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    await page.locator('main[data-ready="true"]').waitFor();
  }

  afterAll(async () => {
    await client?.close().catch(() => {});
    await browser?.close();
    await gw?.stop();
    await emulator?.close();
  });

  it('sets both in the browser; the next MCP calls write to that calendar and tell time in that zone', async () => {
    expect(await defaultOf(client)).toEqual([ANN]);
    await keysPage();
    const calendar = page.getByLabel('Default calendar for agent');
    // Connecting Google made its primary calendar the key's default.
    await expect(calendar.locator('option:checked').textContent()).resolves.toBe(ANN);
    const [automatic, ...choices] = await calendar.locator('option').allTextContents();
    expect(automatic).toBe('Automatic');
    expect(choices.sort()).toEqual([ANN, `Team (${ANN})`].sort());
    await calendar.selectOption({ label: `Team (${ANN})` });
    // The picker finds a zone by its city and shows its offset.
    await page.getByLabel('Time zone for agent').fill('kathm');
    await page.getByRole('option', { name: 'Kathmandu (Asia) — Asia/Kathmandu · UTC+05:45' }).click();
    await page.getByRole('button', { name: 'Save agent' }).click();
    await page.getByText(`Saved agent: default calendar Team (${ANN}), time zone Asia/Kathmandu.`).waitFor();
    await screenshot(page, '30-key-defaults');
    // Drawn again from the server: the choices stay.
    await expect(
      page.getByLabel('Default calendar for agent').locator('option:checked').textContent(),
    ).resolves.toBe(`Team (${ANN})`);
    await expect(page.getByLabel('Time zone for agent').inputValue()).resolves.toBe('Asia/Kathmandu');

    expect(await defaultOf(client)).toEqual(['Team']);
    const created = await tool(client, 'create_event', {
      calendarId: 'primary',
      summary: 'Call at ten',
      start: { dateTime: '2027-03-01T10:00:00', timeZone: 'Asia/Kathmandu' },
      end: { dateTime: '2027-03-01T10:30:00', timeZone: 'Asia/Kathmandu' },
    });
    expect(created.calendarId).toMatch(/^cal_/);
    expect(emulator.admin.events(TEAM).map((event) => event.summary)).toContain('Call at ten');
    expect(emulator.admin.events(ANN).map((event) => event.summary)).not.toContain('Call at ten');
    expect(await tool(client, 'get_current_time')).toMatchObject({
      timeZone: 'Asia/Kathmandu',
      utcOffset: '+05:45',
    });
  });

  it('keeps no free text: a name that is no zone puts the saved one back; back to automatic and the workspace zone', async () => {
    await keysPage();
    const zone = page.getByLabel('Time zone for agent');
    await zone.fill('Mars/Olympus');
    await page.getByRole('listbox').getByText('No zone matches').waitFor();
    await screenshot(page, '31-key-defaults-no-zone');
    await zone.press('Tab');
    await expect(zone.inputValue()).resolves.toBe('Asia/Kathmandu');
    await page.getByRole('button', { name: 'Save agent' }).click();
    await page.getByText('Nothing to save for agent.').waitFor();
    expect((await tool(client, 'get_current_time')).timeZone).toBe('Asia/Kathmandu');

    await page.getByLabel('Default calendar for agent').selectOption({ label: 'Automatic' });
    await page.getByLabel('Time zone for agent').fill('');
    await page.getByRole('button', { name: 'Save agent' }).click();
    await page
      .getByText('Saved agent: default calendar automatic, time zone the workspace’s (America/Sao_Paulo).')
      .waitFor();
    expect(await defaultOf(client)).toEqual([ANN]);
    // No zone of its own: the workspace's, before the default calendar's (Europe/Berlin).
    expect((await tool(client, 'get_current_time')).timeZone).toBe('America/Sao_Paulo');
  });

  it('ticks and unticks toolsets; the agent’s tools/list follows at once', async () => {
    const listed = async () => (await client.listTools()).tools.map((listedTool) => listedTool.name);
    expect(await listed()).toContain('book_slot');
    await keysPage();
    const booking = page.getByLabel('Toolset booking for agent');
    await expect(booking.isChecked()).resolves.toBe(true);
    await expect(page.getByLabel('Toolset rules for agent').isChecked()).resolves.toBe(false);
    await booking.uncheck();
    await page.getByLabel('Toolset search for agent').uncheck();
    await page.getByRole('button', { name: 'Save agent' }).click();
    await page.getByText(/^Saved agent: .*, toolsets calendar\.$/).waitFor();
    await screenshot(page, '32-key-toolsets');
    await expect(page.getByLabel('Toolset booking for agent').isChecked()).resolves.toBe(false);
    const calendarOnly = await listed();
    expect(calendarOnly).toContain('create_event');
    expect(calendarOnly).not.toContain('book_slot');
    expect(calendarOnly).not.toContain('search');

    // No toolset at all is refused with the valid names, and nothing changes.
    await page.getByLabel('Toolset calendar for agent').uncheck();
    await page.getByRole('button', { name: 'Save agent' }).click();
    await page
      .getByRole('alert')
      .getByText(
        'Give at least one toolset: the toolsets are calendar, booking, search, rules, scheduler, ics.',
      )
      .waitFor();
    expect(await listed()).toEqual(calendarOnly);

    await page.getByLabel('Toolset booking for agent').check();
    await page.getByRole('button', { name: 'Save agent' }).click();
    await page.getByText(/^Saved agent: .*, toolsets calendar, booking\.$/).waitFor();
    expect(await listed()).toEqual(expect.arrayContaining(['create_event', 'book_slot']));
    expect(await listed()).not.toContain('search');
  });
});
