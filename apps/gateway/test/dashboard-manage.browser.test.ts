import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GoogleEmulator } from '@calgate/google-emulator';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  calendarsOf,
  connectGoogle,
  consent,
  createKey,
  openDashboard,
  openPage,
  screenshot,
} from './browser.ts';
import { startGatewayWithGoogle } from './google-fixture.ts';
import { connectClient, type TestGateway } from './harness.ts';

const CLIENT = { clientId: 'calgate-manage.apps.googleusercontent.com', clientSecret: 'manage-secret' };
const ANN = 'ann@example.com';
const TEAM = 'team@group.calendar.google.com';
const ROBOT = 'calgate@project.iam.gserviceaccount.com';
const SHARED = 'shared@group.calendar.google.com';
const ADMIN = 'admin@example.test';
const PASSWORD = 'correct horse battery staple';
const ENCRYPTION_KEY = randomBytes(32);

describe('the dashboard in Chromium: rotation, bulk grants, reconnecting, CSRF and a lost session', () => {
  let emulator: GoogleEmulator;
  let gw: TestGateway;
  let browser: Browser;
  let page: Page;
  let secret: string;

  beforeAll(async () => {
    ({ emulator, gw } = await startGatewayWithGoogle(
      CLIENT,
      {
        serviceAccounts: [{ email: ROBOT }],
        accounts: [
          { email: ANN, timeZone: 'Europe/Berlin', calendars: [{ id: TEAM, summary: 'Team' }] },
          {
            email: 'dora@example.com',
            calendars: [{ id: SHARED, summary: 'Shared', shares: [{ email: ROBOT, role: 'writer' }] }],
          },
        ],
      },
      async (started) => {
        const keyFile = join(await mkdtemp(join(tmpdir(), 'calgate-sa-')), 'key.json');
        await writeFile(keyFile, JSON.stringify(started.admin.serviceAccountKey(ROBOT)), { mode: 0o600 });
        return {
          GOOGLE_SERVICE_ACCOUNT_KEY_FILE: keyFile,
          ENCRYPTION_KEY: ENCRYPTION_KEY.toString('base64'),
        };
      },
    ));
    ({ browser, page } = await openDashboard(gw, {
      viewport: { width: 1280, height: 860 },
      owner: { email: ADMIN, password: PASSWORD },
    }));
    secret = await createKey(page, 'bot');
    await connectGoogle(page, ANN);
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    await emulator?.close();
  });

  it('grants all and none per key, and disables a calendar for everyone', async () => {
    await page.goto(`${gw.url}/matrix`);
    await page.locator('main[data-ready="true"]').waitFor();
    await page.getByRole('button', { name: 'None for bot', exact: true }).click();
    await page
      .getByRole('dialog', { name: "Remove 'bot' from all 2 calendars?" })
      .getByRole('button', { name: 'Remove access' })
      .click();
    await page.getByText('bot: None.').waitFor();
    await expect(page.getByLabel('Read Team with bot').isChecked()).resolves.toBe(false);
    await expect(calendarsOf(gw.mcpUrl, secret)).resolves.toEqual([]);
    await page.getByRole('button', { name: 'All for bot', exact: true }).click();
    const giveWrite = page.getByRole('dialog', { name: "Give Write on all 2 calendars to 'bot'?" });
    await expect(giveWrite.getByText(/create, change and delete events/).count()).resolves.toBe(1);
    await giveWrite.getByRole('button', { name: 'Give Write' }).click();
    await page.getByText('bot: All.').waitFor();
    await expect(page.getByLabel(`Write ${ANN} with bot`).isChecked()).resolves.toBe(true);
    await expect(calendarsOf(gw.mcpUrl, secret)).resolves.toEqual(['Team', ANN]);
    await page.getByLabel('Team enabled for every key').uncheck();
    await page.getByText('Team disabled.').waitFor();
    await screenshot(page, '20-matrix-bulk');
    await page.getByLabel('Write Team with bot').uncheck();
    await page.getByText('bot on Team: read.').waitFor();
    await expect(page.getByLabel('Read Team with bot').isChecked()).resolves.toBe(true);
    await page.getByRole('button', { name: 'No key for Team' }).click();
    await page
      .getByRole('dialog', { name: "Remove the 1 API key from 'Team'?" })
      .getByRole('button', { name: 'Remove access' })
      .click();
    await page.getByText('Team: No key.').waitFor();
    await expect(page.getByLabel('Read Team with bot').isChecked()).resolves.toBe(false);
    await expect(page.getByLabel(`Read ${ANN} with bot`).isChecked()).resolves.toBe(true);
  });

  it('revoke and rotate ask first; cancel changes nothing', async () => {
    await openPage(page, 'API keys');
    await page.getByRole('button', { name: 'Revoke bot' }).click();
    const revoke = page.getByRole('dialog', { name: "Revoke key 'bot'?" });
    await expect(revoke.textContent()).resolves.toContain(
      'Agents using it are refused within a few seconds; this cannot be undone.',
    );
    await revoke.getByRole('button', { name: 'Cancel' }).click();
    await revoke.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Rotate bot' }).click();
    const rotate = page.getByRole('dialog', { name: "Rotate key 'bot'?" });
    await rotate.getByLabel('The old secret keeps working for').waitFor();
    await page.keyboard.press('Escape');
    await rotate.waitFor({ state: 'detached' });
    const live = await gw.db.pool.query(`SELECT revoked_at FROM api_keys WHERE name = 'bot'`);
    expect(live.rows[0].revoked_at).toBeNull();
    await expect(calendarsOf(gw.mcpUrl, secret)).resolves.toContain(ANN);
  });

  it('rotates a key: the new secret works at once and the old one is refused', async () => {
    await openPage(page, 'API keys');
    await page.getByRole('button', { name: 'Rotate bot' }).click();
    const dialog = page.getByRole('dialog', { name: "Rotate key 'bot'?" });
    await dialog
      .getByLabel('The old secret keeps working for')
      .selectOption({ label: 'None: the old secret stops at once' });
    await screenshot(page, '21-key-rotate-confirm');
    await dialog.getByRole('button', { name: 'Rotate key' }).click();
    await page.getByRole('heading', { name: 'New secret for bot' }).waitFor();
    const rotated = (await page.locator('#secret').textContent()) ?? '';
    expect(rotated).toMatch(/^cg_live_/);
    expect(rotated).not.toBe(secret);
    await screenshot(page, '21-key-rotated');
    await expect(connectClient(gw.mcpUrl, secret)).rejects.toThrow(/not valid/);
    await expect(calendarsOf(gw.mcpUrl, rotated)).resolves.toContain(ANN);
  });

  it('shows an account that needs reconnecting and reconnects it', async () => {
    await gw.db.pool.query(`UPDATE connections SET status = 'needs_reauth'`);
    await openPage(page, 'Accounts');
    await page.getByText('needs reauth').waitFor();
    await screenshot(page, '22-needs-reauth');
    await page
      .getByRole('alert')
      .getByText(/An account needs reconnecting/)
      .waitFor();
    await page
      .getByRole('link', { name: `Reconnect ${ANN}` })
      .first()
      .click();
    await consent(page, ANN);
    await page.getByRole('heading', { name: `Reconnected ${ANN}` }).waitFor();
    await page.goto(`${gw.url}/accounts`);
    await page.locator('main[data-ready="true"]').waitFor();
    await expect(page.getByText('needs reauth').count()).resolves.toBe(0);
    await expect(page.locator('.badge.active').count()).resolves.toBe(1);
  });

  it('adds a calendar shared with the service account', async () => {
    await openPage(page, 'Accounts');
    await expect(page.locator('#sa-email').textContent()).resolves.toBe(ROBOT);
    await page.getByLabel('Calendar id').fill(SHARED);
    await page.getByRole('button', { name: 'Add shared calendar' }).click();
    await page.getByText(`Added ${SHARED}.`).waitFor();
    await page
      .getByRole('list', { name: /Calendars of/ })
      .getByText('Shared')
      .waitFor();
    await screenshot(page, '24-service-account');
    await page.getByRole('button', { name: `Disconnect ${ROBOT}` }).click();
    const disconnect = page.getByRole('dialog', { name: `Disconnect ${ROBOT}?` });
    await expect(disconnect.textContent()).resolves.toMatch(
      /Its 1 calendar and their grants on \d+ keys? are removed/,
    );
    await disconnect.getByRole('button', { name: 'Disconnect' }).click();
    await page.getByText(`Disconnected ${ROBOT}.`).waitFor();
    // The message shows before the account list is drawn again.
    await page.getByRole('list', { name: `Calendars of ${ROBOT}` }).waitFor({ state: 'detached' });
    await expect(page.getByRole('list', { name: `Calendars of ${ROBOT}` }).count()).resolves.toBe(0);
  });

  it('refuses a write without the CSRF header; an expired session goes back to a keyboard sign-in', async () => {
    const status = await page.evaluate<number>(
      `fetch('/api/v1/keys', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"x"}' }).then((r) => r.status)`,
    );
    expect(status).toBe(403);
    const me = await page.evaluate<{ user: { id: string }; tenant: { id: string } }>(
      `fetch('/api/v1/auth/me').then((r) => r.json())`,
    );
    // The browser keeps its cookie; the session behind it runs out on the server.
    const { rowCount } = await gw.db.pool.query(
      "UPDATE sessions SET expires_at = now() - interval '1 hour' WHERE user_id = $1",
      [me.user.id],
    );
    expect(rowCount).toBeGreaterThan(0);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await screenshot(page, '23-session-expired');
    await page.keyboard.type(ADMIN);
    await page.keyboard.press('Tab');
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.goto(`${gw.url}/no/such/page`);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/');
  });
});
