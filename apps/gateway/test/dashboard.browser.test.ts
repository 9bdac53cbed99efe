import type { GoogleEmulator } from '@calgate/google-emulator';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, openPage, screenshot } from './browser.ts';
import { startGatewayWithGoogle } from './google-fixture.ts';
import { connectClient, type TestGateway } from './harness.ts';

const CLIENT = { clientId: 'calgate-browser.apps.googleusercontent.com', clientSecret: 'browser-secret' };
const ANN = 'ann@example.com';
const TEAM = 'team@group.calendar.google.com';
const PASSWORD = 'correct horse battery staple';

interface Listed {
  calendars: { summary: string; canWrite: boolean }[];
}

describe('the dashboard in Chromium: from a fresh install to a working, then revoked, agent key', () => {
  let emulator: GoogleEmulator;
  let gw: TestGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let secret: string;

  beforeAll(async () => {
    const started = await startGatewayWithGoogle(CLIENT, {
      accounts: [{ email: ANN, timeZone: 'Europe/Berlin', calendars: [{ id: TEAM, summary: 'Team' }] }],
    });
    ({ emulator, gw } = started);
    const { url } = started;
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: url });
    page = await context.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    await emulator?.close();
  });

  it('signs up the first user of a fresh install', async () => {
    await page.goto(gw.url);
    await page.getByRole('heading', { level: 1, name: 'Set up Calgate' }).waitFor();
    await page.getByLabel('Workspace name').fill('Acme');
    await page.getByLabel('Email').fill('owner@example.test');
    await page.getByLabel('Password (at least 12 characters)').fill(PASSWORD);
    await screenshot(page, '01-sign-up');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await expect(page.locator('#mcp-url').textContent()).resolves.toBe(`${gw.url}/api/mcp`);
    await page.getByText('owner@example.test · Acme').waitFor();
    await screenshot(page, '02-overview');
  });

  it('connects a Google account through the consent page', async () => {
    await openPage(page, 'Accounts');
    await page.getByLabel('Calgate may').selectOption('write');
    await page.locator('#access').selectOption('none');
    await page.getByRole('button', { name: 'Connect Google' }).click();
    await page.waitForURL((url) => url.href.startsWith(emulator.url));
    await screenshot(page, '03-google-consent');
    await page.getByLabel(ANN).check();
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.getByRole('heading', { name: `Connected ${ANN}` }).waitFor();
    await screenshot(page, '04-oauth-callback');
    await page.getByRole('link', { name: 'Back to Accounts' }).click();
    await page.getByRole('heading', { level: 1, name: 'Accounts' }).waitFor();
    await page.locator('main[data-ready="true"]').waitFor();
    const calendars = page.getByRole('list', { name: `Calendars of ${ANN}` });
    await expect(calendars.getByRole('listitem').allTextContents()).resolves.toHaveLength(2);
    await screenshot(page, '05-accounts');
  });

  it('creates a key, shows the secret once and copies it', async () => {
    await openPage(page, 'API keys');
    await page.getByLabel('Name').fill('agent');
    await page.getByRole('button', { name: 'Create key' }).click();
    secret = (await page.locator('#secret').textContent()) ?? '';
    expect(secret).toMatch(/^cg_live_/);
    await page.getByRole('button', { name: 'Copy the secret' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    await expect(page.evaluate<string>('navigator.clipboard.readText()')).resolves.toBe(secret);
    await expect(
      page.getByRole('table', { name: 'Your API keys' }).getByRole('row', { name: /agent/ }).textContent(),
    ).resolves.toContain('active');
    await screenshot(page, '06-keys');
  });

  it('ticks Read on one calendar and Write on another; the key sees exactly those', async () => {
    await openPage(page, 'Permissions');
    await page.getByLabel(`Read ${ANN} with agent`).check();
    await page.getByText(`agent on ${ANN}: read.`).waitFor();
    await page.getByLabel('Write Team with agent').check();
    await page.getByText('agent on Team: read and write.').waitFor();
    await expect(page.getByLabel('Read Team with agent').isChecked()).resolves.toBe(true);
    await expect(page.getByLabel(`Write ${ANN} with agent`).isChecked()).resolves.toBe(false);
    await screenshot(page, '07-matrix');
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, '07-matrix-narrow');
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    await page.setViewportSize({ width: 1280, height: 860 });

    const client = await connectClient(gw.mcpUrl, secret);
    const listed = (await client.callTool({ name: 'list_calendars', arguments: {} }))
      .structuredContent as Listed;
    expect(
      listed.calendars
        .map(({ summary, canWrite }) => ({ summary, canWrite }))
        .sort((a, b) => a.summary.localeCompare(b.summary)),
    ).toEqual([
      { summary: ANN, canWrite: false },
      { summary: 'Team', canWrite: true },
    ]);
    const at = { start: { dateTime: '2027-02-01T09:00:00Z' }, end: { dateTime: '2027-02-01T10:00:00Z' } };
    const onTeam = await client.callTool({
      name: 'create_event',
      arguments: { calendarId: TEAM, summary: 'Plan', ...at },
    });
    expect(onTeam.isError).toBeFalsy();
    const onAnn = await client.callTool({
      name: 'create_event',
      arguments: { calendarId: ANN, summary: 'Plan', ...at },
    });
    expect(onAnn.isError).toBe(true);
    await client.close();
  });

  it('shows the calls in the audit log and the tool reference', async () => {
    await openPage(page, 'Audit log');
    // Audit rows are written after the answer; filter again until they are there.
    const rows = page.getByRole('row', { name: /list_calendars/ });
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Filter' }).click();
          return rows.count();
        },
        { timeout: 15_000, interval: 250 },
      )
      .toBeGreaterThan(0);
    await page.getByLabel('Tools and actions').selectOption(['create_event']);
    // Both create_event rows may land after the list_calendars one: filter until they are there.
    const created = page.getByRole('row', { name: /create_event/ });
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Filter' }).click();
          await expect.poll(() => rows.count(), { timeout: 5_000 }).toBe(0);
          return created.count();
        },
        { timeout: 15_000, interval: 250 },
      )
      .toBe(2);
    await expect.poll(() => page.getByRole('row', { name: /create_event Team ok/ }).count()).toBe(1);
    await expect(page.getByRole('button', { name: 'Older entries' }).isVisible()).resolves.toBe(false);
    await screenshot(page, '08-audit');
    await openPage(page, 'Docs');
    await page.getByRole('heading', { name: /book_slot/ }).waitFor();
    await expect(
      page.getByRole('link', { name: 'http://127.0.0.1:8790/' }).getAttribute('href'),
    ).resolves.toBe('http://127.0.0.1:8790/');
    await screenshot(page, '09-docs');
  });

  it('revokes the key; the agent is refused', async () => {
    await openPage(page, 'API keys');
    await page.getByRole('button', { name: 'Revoke agent' }).click();
    await page
      .getByRole('dialog', { name: "Revoke key 'agent'?" })
      .getByRole('button', { name: 'Revoke key' })
      .click();
    await page.getByText('Revoked agent.').waitFor();
    await screenshot(page, '10-key-revoked');
    await expect(connectClient(gw.mcpUrl, secret)).rejects.toThrow(/revoked/);
  });

  it('signing out ends the session: a reload shows sign-in and the old cookie is refused', async () => {
    const keysWith = async (cookie: string) =>
      (await fetch(`${gw.url}/api/v1/keys`, { headers: { cookie: `calgate_session=${cookie}` } })).status;
    const before = (await context.cookies(gw.url)).find((c) => c.name === 'calgate_session')?.value ?? '';
    expect(await keysWith(before)).toBe(200);
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.reload();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await keysWith(before)).toBe(401);
    // A cookie that is not even well-formed is no session either: the sign-in page, not an error.
    await context.addCookies([{ name: 'calgate_session', value: '%E0%A4%A', url: gw.url }]);
    await page.goto(`${gw.url}/keys`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
  });

  it('changes the password (signing out the other session), then signs out everywhere', async () => {
    await page.getByLabel('Email').fill('owner@example.test');
    await page.getByLabel('Password (at least 12 characters)').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    const signin = await fetch(`${gw.url}/api/v1/auth/signin`, {
      method: 'POST',
      headers: { origin: gw.url, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'owner@example.test', password: PASSWORD }),
    });
    const elsewhere = (signin.headers.get('set-cookie') ?? '').split(';')[0] as string;
    await page.getByRole('link', { name: 'owner@example.test · Acme' }).click();
    await page.getByRole('heading', { level: 1, name: 'Your account' }).waitFor();
    const sessions = page.getByRole('list', { name: 'Signed-in sessions' }).getByRole('listitem');
    await expect.poll(() => sessions.count()).toBe(2);
    await page.getByLabel('Current password').fill(PASSWORD);
    await page.getByLabel('New password (at least 12 characters)').fill(`${PASSWORD} two`);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Password changed. 1 other session was signed out.').waitFor();
    await expect.poll(() => sessions.count()).toBe(1);
    await screenshot(page, '11-account');
    expect((await fetch(`${gw.url}/api/v1/keys`, { headers: { cookie: elsewhere } })).status).toBe(401);
    await page.getByRole('button', { name: 'Sign out everywhere' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.reload();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
  });
});
