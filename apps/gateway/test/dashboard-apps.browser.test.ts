import { OAuthRepository } from '@calgate/store';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIRST_OWNER, openPage, personOf, screenshot, startDashboard } from './browser.ts';
import type { TestGateway } from './harness.ts';

const { email: OWNER, password: PASSWORD } = FIRST_OWNER;

describe('the dashboard in Chromium: connected apps listed, in the matrix, and revoked', () => {
  let gw: TestGateway;
  let browser: Browser;
  let page: Page;
  let appId: string;
  let work: string;

  beforeAll(async () => {
    ({ gw, browser, page } = await startDashboard({ viewport: { width: 1280, height: 860 } }));
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
  });

  it('explains how apps get connected while there are none', async () => {
    await openPage(page, 'Connected apps');
    await page.getByText('No apps are connected yet.').waitFor();
    await expect(page.locator('main').textContent()).resolves.toContain(`${gw.url}/api/mcp`);
  });

  it('lists an app a person approved, with its calendars, and shows it in the matrix', async () => {
    const owner = await personOf(gw);
    work = await gw.localCalendar(owner.tenantId, 'Work');
    const oauth = new OAuthRepository(gw.db);
    const { client } = await oauth.registerClient({
      clientName: 'Claude',
      redirectUris: ['https://claude.ai/api/mcp/auth_callback'],
    });
    appId = await oauth.createConnection({
      tenantId: owner.tenantId,
      userId: owner.id,
      clientId: client.clientId,
      name: 'Claude',
      toolsets: ['calendar'],
      calendars: [{ calendarId: work, read: true, write: true }],
    });

    await page.reload();
    await page.locator('main[data-ready="true"]').waitFor();
    const row = page.getByRole('row', { name: /Claude/ });
    await expect(row.getByRole('cell').allTextContents()).resolves.toEqual([
      client.clientId,
      OWNER,
      'Work (Read, Write)',
      'calendar',
      'AskStrictOffSave Claude',
      expect.any(String),
      '—',
      'active',
      'Revoke Claude',
    ]);
    await screenshot(page, '40-connected-apps');

    await openPage(page, 'Permissions');
    await page.getByRole('columnheader', { name: /Claude connected app/ }).waitFor();
    await expect(page.getByLabel('Write Work with Claude (app)').isChecked()).resolves.toBe(true);
    await page.getByLabel('Write Work with Claude (app)').uncheck();
    await page.getByText('Claude (app) on Work: read.').waitFor();
    await expect(page.getByLabel('Read Work with Claude (app)').isChecked()).resolves.toBe(true);
    await screenshot(page, '41-matrix-with-app');
    const { rows: grants } = await gw.db.pool.query<{ can_read: boolean; can_write: boolean }>(
      'SELECT can_read, can_write FROM grants WHERE key_id = $1 AND calendar_id = $2',
      [appId, work],
    );
    expect(grants).toEqual([{ can_read: true, can_write: false }]);
  });

  it('revokes an app only after the confirm dialog that names it', async () => {
    await openPage(page, 'Connected apps');
    await page.getByRole('button', { name: 'Revoke Claude' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke Claude?' });
    await dialog.waitFor();
    await expect(dialog.textContent()).resolves.toContain(
      'It loses access to your calendars within a few seconds.',
    );
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    const live = await gw.db.pool.query('SELECT revoked_at FROM api_keys WHERE id = $1', [appId]);
    expect(live.rows[0].revoked_at).toBeNull();

    await page.getByRole('button', { name: 'Revoke Claude' }).click();
    await screenshot(page, '42-revoke-confirm');
    await dialog.getByRole('button', { name: 'Revoke', exact: true }).click();
    await page.getByRole('status').getByText('Revoked Claude.').waitFor();
    const row = page.getByRole('row', { name: /Claude/ });
    await expect(row.getByText(/^revoked /).isVisible()).resolves.toBe(true);
    await expect(row.getByRole('button').count()).resolves.toBe(0);
    const gone = await gw.db.pool.query('SELECT revoked_at FROM api_keys WHERE id = $1', [appId]);
    expect(gone.rows[0].revoked_at).toBeInstanceOf(Date);

    await openPage(page, 'Permissions');
    await expect(page.getByRole('columnheader', { name: /Claude/ }).count()).resolves.toBe(0);
  });

  it('keeps the query of a page through sign-in, so a consent request comes back', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.goto(`${gw.url}/consent?request=not-a-real-request`);
    await page.getByLabel('Email').fill(OWNER);
    await page.getByLabel('Password (at least 12 characters)').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('main[data-ready="true"]').waitFor();
    expect(new URL(page.url()).search).toBe('?request=not-a-real-request');
    await page.getByRole('heading', { level: 1, name: 'Connect an app' }).waitFor();
    await page.getByRole('alert').waitFor();
  });
});
