import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calendarsOf, openPage, personOf, screenshot, startDashboard } from './browser.ts';
import { connectGoogleAccount, startTestEmulator, type TestEmulator } from './google-fixture.ts';
import { connectClient, type TestGateway, textOf } from './harness.ts';

const ANN = 'ann@example.com';

describe('the dashboard in Chromium: the Get started checklist, the key form, the safe key actions and the reconnect banner', () => {
  let gw: TestGateway;
  let browser: Browser;
  let page: Page;
  let secret: string;
  let emulator: TestEmulator;

  beforeAll(async () => {
    emulator = await startTestEmulator(
      { clientId: 'calgate-test.apps.googleusercontent.com', clientSecret: 'test-client-secret' },
      { accounts: [{ email: ANN, timeZone: 'Europe/Berlin' }] },
    );
    ({ gw, browser, page } = await startDashboard({ env: emulator.env }));
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    await emulator?.close();
  });

  const checklist = () => page.getByRole('region', { name: 'Get started' });

  it('walks a new workspace from a calendar to a key, its client configuration and a test call', async () => {
    await gw.localCalendar((await personOf(gw)).tenantId, 'Work');
    await page.goto(gw.url);
    await page.locator('main[data-ready="true"]').waitFor();
    await checklist().waitFor();
    await checklist().getByRole('heading', { name: 'Connect a calendar ✓' }).waitFor();
    await checklist().getByRole('heading', { name: 'Create a key with its calendars' }).waitFor();
    await screenshot(page, '40-onboarding');

    await checklist().getByLabel('Name').fill('agent');
    await checklist().getByLabel('Access to Work').selectOption('read');
    await checklist().getByRole('button', { name: 'Create key' }).click();
    await checklist().getByRole('heading', { name: 'Configure your client with agent' }).waitFor();
    secret = (await checklist().locator('#secret').textContent()) ?? '';
    expect(secret).toMatch(/^cg_live_/);
    // Every configuration that takes a key has this one filled in (Claude.ai signs in with OAuth).
    const configs = await checklist().locator('pre').allTextContents();
    expect(configs.filter((text) => text.includes(secret)).length).toBeGreaterThanOrEqual(2);
    for (const text of configs) {
      expect(text).not.toContain('<YOUR_API_KEY>');
    }
    // The configuration works as pasted: the key reads exactly the calendar chosen.
    await expect(calendarsOf(gw.mcpUrl, secret)).resolves.toEqual(['Work']);

    await checklist().getByRole('button', { name: 'Send a test call' }).click();
    const answer = checklist().getByText(/^list_calendars answered in \d+ ms\./);
    await answer.waitFor();
    await expect(answer.textContent()).resolves.toContain('agent sees Work (Read).');
    await screenshot(page, '41-onboarding-test-call');

    // With a live key the workspace is set up: the checklist is gone, the overview stays.
    await page.reload();
    await page.locator('main[data-ready="true"]').waitFor();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await expect(checklist().count()).resolves.toBe(0);
    await expect(page.locator('main').textContent()).resolves.toContain('<YOUR_API_KEY>');
  });

  it('cancelling a revoke changes nothing', async () => {
    await openPage(page, 'API keys');
    await page.getByRole('button', { name: 'Revoke agent' }).click();
    const dialog = page.getByRole('dialog', { name: "Revoke key 'agent'?" });
    await expect(dialog.textContent()).resolves.toContain('this cannot be undone');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    await expect(
      page.getByRole('table', { name: 'Your API keys' }).getByRole('row', { name: /agent/ }).textContent(),
    ).resolves.toContain('active');
    const { rows } = await gw.db.pool.query(`SELECT revoked_at FROM api_keys WHERE name = 'agent'`);
    expect(rows[0].revoked_at).toBeNull();
    await expect(calendarsOf(gw.mcpUrl, secret)).resolves.toEqual(['Work']);
  });

  it('rotates with a grace period: the new secret is shown and both work until the period ends', async () => {
    await page.getByRole('button', { name: 'Rotate agent' }).click();
    const dialog = page.getByRole('dialog', { name: "Rotate key 'agent'?" });
    await dialog.getByLabel('The old secret keeps working for').selectOption({ label: '5 minutes' });
    await dialog.getByRole('button', { name: 'Rotate key' }).click();
    await page.getByRole('heading', { name: 'New secret for agent' }).waitFor();
    const rotated = (await page.locator('#secret').textContent()) ?? '';
    expect(rotated).toMatch(/^cg_live_/);
    expect(rotated).not.toBe(secret);
    await screenshot(page, '42-onboarding-rotated');
    await expect(calendarsOf(gw.mcpUrl, rotated)).resolves.toEqual(['Work']);
    await expect(calendarsOf(gw.mcpUrl, secret)).resolves.toEqual(['Work']);
    const { rows } = await gw.db.pool.query<{ grace: number }>(
      `SELECT EXTRACT(EPOCH FROM previous_valid_until - now())::int AS grace FROM api_keys WHERE name = 'agent'`,
    );
    expect(rows[0]?.grace).toBeGreaterThan(240);
    expect(rows[0]?.grace).toBeLessThanOrEqual(300);
  });

  it('creates a key with the toolsets and expiry chosen in the form', async () => {
    // Opening the page already shown renders it again; a slow session check must not let the form
    // be filled in the old render (that lost the input and left the test waiting for the secret).
    await page.route(
      '**/auth/me',
      async (route) => {
        await new Promise((resolve) => setTimeout(resolve, 400));
        await route.continue();
      },
      { times: 1 },
    );
    await openPage(page, 'API keys');
    const form = page.locator('form.key-create');
    await form.getByLabel('Name').fill('scoped');
    await form.getByLabel('Expires (optional; none if empty)').fill('2031-03-31');
    // Defaults are calendar, booking and search: drop booking, add rules.
    await expect(form.getByLabel('booking', { exact: true }).isChecked()).resolves.toBe(true);
    await form.getByLabel('booking', { exact: true }).uncheck();
    await form.getByLabel('rules', { exact: true }).check();
    await form.getByLabel('Access to Work').selectOption('read');
    await form.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('heading', { name: 'Secret for scoped' }).waitFor();
    const scopedSecret = (await page.locator('#secret').textContent()) ?? '';
    expect(scopedSecret).toMatch(/^cg_live_/);
    await screenshot(page, '43-onboarding-key-toolsets-expiry');

    // What the API says of the key, read with the browser's own session.
    const keys = await page.evaluate(async () => {
      const response = await fetch('/api/v1/keys');
      return (await response.json()) as {
        keys: { name: string; toolsets?: string[]; expiresAt: string | null }[];
      };
    });
    const scoped = keys.keys.find((key) => key.name === 'scoped');
    expect(scoped?.toolsets).toEqual(['calendar', 'search', 'rules']);
    expect(scoped?.expiresAt).toBe('2031-03-31T23:59:59.000Z');
    // The agent sees those toolsets' tools (a read-only key: the reading ones).
    const client = await connectClient(gw.mcpUrl, scopedSecret);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    await client.close();
    expect(names).toContain('get_time_summary');
    expect(names).not.toContain('find_free_slots');
  });

  it('shows a reconnect banner on the Overview for an account Google no longer accepts', async () => {
    const { rows } = await gw.db.pool.query<{ tenant_id: string; id: string }>(
      `SELECT tenant_id, id FROM api_keys WHERE name = 'agent'`,
    );
    const tenant = { tenantId: rows[0]?.tenant_id as string, keyId: rows[0]?.id as string };
    const calendarId = await connectGoogleAccount(gw, emulator, tenant, ANN, 'read');
    await page.goto(gw.url);
    await page.locator('main[data-ready="true"]').waitFor();
    await expect(page.getByRole('alert').count()).resolves.toBe(0);

    // Google revokes the refresh token; the next call through the account marks it needs_reauth.
    emulator.admin.revokeTokens({ email: ANN });
    emulator.admin.expireAccessTokens({ email: ANN });
    const client = await connectClient(gw.mcpUrl, secret);
    const failed = await client.callTool({ name: 'list_events', arguments: { calendarId } });
    await client.close();
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toMatch(/reconnect/i);

    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    const banner = page.getByRole('alert');
    await banner.waitFor();
    await expect(banner.textContent()).resolves.toContain(
      'An account needs reconnecting: Google no longer accepts its token',
    );
    const reconnect = banner.getByRole('link', { name: `Reconnect ${ANN}` });
    await expect(reconnect.getAttribute('href')).resolves.toBe('/oauth/google/start?access=none');
    await screenshot(page, '44-onboarding-reauth-banner');
  });
});
