import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@calgate/testkit';
import type { Client } from '@modelcontextprotocol/client';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, screenshot } from './browser.ts';
import { connectClient, textOf } from './harness.ts';
import { npmStart, type Started, stop } from './npm-start.ts';

const OWNER = 'owner@example.test';
const PASSWORD = 'correct horse battery staple';
const BERLIN_OFFSET = /\+0[12]:00$/;

async function tool(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, `${name}: ${textOf(result)}`).toBeFalsy();
  return result.structuredContent as Record<string, unknown>;
}

/**
 * What a new user does: `npm start` on an empty database (on a UTC machine), the dashboard's
 * first-run form in a browser that lives in Europe/Berlin, then an agent with the printed key.
 * No CLI step: every answer is in Berlin time.
 */
describe('a fresh npm start, the first-run form with Europe/Berlin, then Berlin answers over MCP', () => {
  let dataDir: string;
  let port: number;
  let started: Started;
  let browser: Browser;
  let client: Client;
  let secret: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'calgate-first-run-'));
    port = await freePort();
    started = await npmStart(dataDir, port, { TZ: 'UTC' });
    secret = /API key:\s+(cg_live_[A-Za-z0-9]{32})/.exec(started.output())?.[1] ?? '';
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await client?.close().catch(() => {});
    await browser?.close();
    if (started !== undefined) {
      await stop(started, dataDir);
    }
    await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('prints the key and where to choose the time zone; until then the key answers in the machine’s zone', async () => {
    expect(secret).not.toBe('');
    expect(started.output()).toContain(`Next, open the dashboard at http://127.0.0.1:${port}/`);
    expect(started.output()).toContain('until then the key answers in UTC');
    client = await connectClient(`http://127.0.0.1:${port}/api/mcp`, secret);
    expect(await tool(client, 'get_current_time')).toMatchObject({ timeZone: 'UTC', utcOffset: '+00:00' });
  });

  it('opens on the create-owner form with the browser’s zone; the picker finds Berlin by its city', async () => {
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      timezoneId: 'Europe/Berlin',
    });
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${port}/`);
    await page.getByRole('heading', { level: 1, name: 'Set up Calgate' }).waitFor();
    await expect(page.getByRole('button', { name: 'Sign in' }).count()).resolves.toBe(0);
    const zone = page.getByRole('combobox', { name: 'Time zone' });
    await expect(zone.inputValue()).resolves.toBe('Europe/Berlin');

    // Searchable by city, with the current offset: not a free-text box.
    await zone.fill('berl');
    const berlin = page.getByRole('option', { name: /^Berlin \(Europe\) — Europe\/Berlin · UTC\+0[12]:00$/ });
    await berlin.waitFor();
    await screenshot(page, '90-first-run-zone-search');
    await berlin.click();
    await expect(zone.inputValue()).resolves.toBe('Europe/Berlin');

    await page.getByLabel('Workspace name').fill('Home');
    await page.getByLabel('Email').fill(OWNER);
    await page.getByLabel('Password (at least 12 characters)').fill(PASSWORD);
    await screenshot(page, '91-first-run');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.locator('main[data-ready="true"]').waitFor();
    await page.getByText(`${OWNER} · Home`).waitFor();
    const settings = page.getByRole('region', { name: 'Workspace' });
    await expect(settings.getByRole('combobox', { name: 'Workspace time zone' }).inputValue()).resolves.toBe(
      'Europe/Berlin',
    );
    await screenshot(page, '92-first-run-overview');
    // Each client configuration on the Overview is a block npm start printed, under the same label.
    const shown = await page.locator('section.config').evaluateAll((cards) =>
      cards.map((card) => ({
        label: card.querySelector('h3')?.textContent ?? '',
        text: card.querySelector('pre')?.textContent ?? '',
      })),
    );
    expect(shown.map(({ label }) => label)).toEqual([
      'Claude Code',
      'Claude Desktop',
      'Cursor',
      'Claude.ai connector',
      'ChatGPT connector',
    ]);
    expect(started.output()).toContain(
      shown.map(({ label, text }) => `\n${label}:\n${text.replaceAll('<YOUR_API_KEY>', secret)}\n`).join(''),
    );
    await context.close();
  });

  it('get_current_time answers in Berlin with the first-run key, without any CLI step', async () => {
    const now = await tool(client, 'get_current_time');
    expect(now.timeZone).toBe('Europe/Berlin');
    expect(now.dateTime).toMatch(BERLIN_OFFSET);
    const calendars = (await tool(client, 'list_calendars')) as {
      calendars: { summary: string; timeZone: string }[];
    };
    expect(calendars.calendars).toEqual([
      expect.objectContaining({ summary: 'Calgate', timeZone: 'Europe/Berlin' }),
    ]);
  });

  it('list_bookings writes the bookings in Berlin time (+01:00 in winter, +02:00 in summer) and says so', async () => {
    await tool(client, 'book_slot', {
      calendarId: 'primary',
      start: '2027-01-11T23:30:00Z',
      end: '2027-01-12T00:30:00Z',
      summary: 'Late call',
    });
    await tool(client, 'book_slot', {
      calendarId: 'primary',
      start: '2027-07-05T08:00:00Z',
      end: '2027-07-05T09:00:00Z',
      summary: 'Summer review',
    });
    const listed = (await tool(client, 'list_bookings', {
      timeMin: '2027-01-01',
      timeMax: '2027-12-31',
    })) as {
      bookings: { summary: string; start: string; end: string }[];
      timeZone?: string;
    };
    expect(listed.bookings.map(({ summary, start, end }) => ({ summary, start, end }))).toEqual([
      { summary: 'Late call', start: '2027-01-12T00:30:00+01:00', end: '2027-01-12T01:30:00+01:00' },
      { summary: 'Summer review', start: '2027-07-05T10:00:00+02:00', end: '2027-07-05T11:00:00+02:00' },
    ]);
    expect(listed.timeZone).toBe('Europe/Berlin');
  });

  it('get_time_summary splits days in Berlin and says so', async () => {
    const summary = (await tool(client, 'get_time_summary', {
      timeMin: '2027-01-11',
      timeMax: '2027-01-12',
      groupBy: 'day',
      roundingMinutes: 0,
    })) as {
      timeZone: string;
      timeMin: string;
      timeMax: string;
      lines: { period?: string; hours: number }[];
    };
    expect(summary.timeZone).toBe('Europe/Berlin');
    expect(summary.timeMin).toBe('2027-01-11T00:00:00+01:00');
    expect(summary.timeMax).toMatch(/^2027-01-1[23]T00:00:00\+01:00$/);
    // 00:30–01:30 in Berlin is all on the 12th (in UTC it would straddle midnight).
    expect(summary.lines.map(({ period, hours }) => ({ period, hours }))).toEqual([
      { period: '2027-01-12', hours: 1 },
    ]);
  });
});
