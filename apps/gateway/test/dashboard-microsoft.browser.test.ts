import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, openDashboard, openPage, ownAddress, screenshot, startDashboard } from './browser.ts';
import { connectClient, startTestGateway, type TestGateway, textOf } from './harness.ts';
import {
  connectionsSealedFor,
  startMicrosoftTestEmulator,
  type TestMicrosoftEmulator,
  withdrawMicrosoftConsent,
} from './microsoft-fixture.ts';

const MEG = 'meg@contoso.example';

describe('the dashboard in Chromium: Connect Microsoft', () => {
  let emulator: TestMicrosoftEmulator;
  let gw: TestGateway;
  let browser: Browser;
  let page: Page;
  let secret: string;

  beforeAll(async () => {
    const own = await ownAddress();
    emulator = await startMicrosoftTestEmulator(
      {
        users: [
          {
            email: MEG,
            calendars: [{ name: 'Calendar', isDefaultCalendar: true }, { name: 'Planning' }],
          },
        ],
      },
      own.url,
    );
    gw = await startTestGateway({ ...emulator.env, ...own.env });
    ({ browser, page } = await openDashboard(gw));
    secret = await createKey(page, 'bot');
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    await emulator?.close();
  });

  const account = () => page.locator(`li[data-account="${MEG}"]`);

  it('connects through Microsoft’s sign-in and back; the calendars appear in the permission matrix', async () => {
    await openPage(page, 'Accounts');
    await page.getByLabel('Microsoft permission').selectOption('write');
    await page.getByLabel('Existing API keys get').selectOption('read');
    await screenshot(page, '60-microsoft-connect');
    await page.getByRole('button', { name: 'Connect Microsoft' }).click();
    await page.getByRole('heading', { name: `Connected ${MEG}` }).waitFor();
    const authorize = emulator.admin.requests({ op: 'oauth.authorize' });
    expect(authorize).toHaveLength(1);
    await page.getByRole('link', { name: 'Back to Accounts' }).click();
    await page.getByRole('heading', { level: 1, name: 'Accounts' }).waitFor();
    await page.locator('main[data-ready="true"]').waitFor();
    await account().getByRole('heading', { name: MEG }).waitFor();
    await expect(account().getByText('Microsoft', { exact: true }).count()).resolves.toBe(1);
    await expect(
      account()
        .getByRole('list', { name: `Calendars of ${MEG}` })
        .textContent(),
    ).resolves.toMatch(/Calendar.*Planning/);
    await screenshot(page, '61-microsoft-connected');

    await openPage(page, 'Permissions');
    await expect(page.getByLabel('Read Planning with bot').isChecked()).resolves.toBe(true);
    await expect(page.getByLabel('Write Planning with bot').isChecked()).resolves.toBe(false);
    await expect(page.getByLabel('Write Planning with bot').isDisabled()).resolves.toBe(false);
    await page.getByLabel('Read Calendar with bot').waitFor();
    await screenshot(page, '62-microsoft-matrix');

    const client = await connectClient(gw.mcpUrl, secret);
    const listed = textOf(await client.callTool({ name: 'list_calendars', arguments: {} }));
    await client.close();
    expect(listed).toContain('Planning');
  });

  it('shows needs_reauth after Microsoft refuses the token, and Reconnect brings it back', async () => {
    const { rows } = await gw.db.pool.query<{ id: string; tenant_id: string }>(
      'SELECT id, tenant_id FROM connections WHERE account_email = $1',
      [MEG],
    );
    const row = rows[0];
    if (row === undefined) {
      throw new Error('the connection is missing');
    }
    // Consent withdrawn at Microsoft: the next refresh gets invalid_grant and marks the account.
    const connections = connectionsSealedFor(gw, emulator);
    await withdrawMicrosoftConsent(emulator, connections, row.tenant_id, row.id, MEG);

    await openPage(page, 'Accounts');
    await account().getByText('Microsoft no longer accepts this account’s token.').waitFor();
    await page
      .getByRole('alert')
      .getByRole('link', { name: `Reconnect ${MEG}` })
      .waitFor();
    await screenshot(page, '63-microsoft-needs-reauth');
    await account()
      .getByRole('link', { name: `Reconnect ${MEG}` })
      .click();
    await page.getByRole('heading', { name: `Reconnected ${MEG}` }).waitFor();
    await page.getByRole('link', { name: 'Back to Accounts' }).click();
    await page.locator('main[data-ready="true"]').waitFor();
    await account().getByRole('heading', { name: MEG }).waitFor();
    await expect(account().getByText('no longer accepts').count()).resolves.toBe(0);
    await expect(page.getByRole('alert').count()).resolves.toBe(0);
    // Grants are as they were.
    await openPage(page, 'Permissions');
    await expect(page.getByLabel('Read Planning with bot').isChecked()).resolves.toBe(true);
  });

  it('disconnects: the account, its calendars and their grants are gone', async () => {
    await openPage(page, 'Accounts');
    await account()
      .getByRole('button', { name: `Disconnect ${MEG}` })
      .click();
    await page.getByRole('dialog').getByRole('button', { name: 'Disconnect' }).click();
    await page.getByText(`Disconnected ${MEG}.`).waitFor();
    // The message shows before the account list is drawn again.
    await account().waitFor({ state: 'detached' });
    await expect(account().count()).resolves.toBe(0);
    await openPage(page, 'Permissions');
    await expect(page.getByLabel('Read Planning with bot').count()).resolves.toBe(0);
    const { rows } = await gw.db.pool.query(
      `SELECT c.id FROM calendars c JOIN connections n ON n.id = c.connection_id WHERE n.account_email = $1`,
      [MEG],
    );
    expect(rows).toEqual([]);
  });
});

describe('the dashboard in Chromium: Microsoft not configured', () => {
  let gw: TestGateway;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    ({ gw, browser, page } = await startDashboard());
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
  });

  it('shows Connect Microsoft disabled, looking disabled, with why and how to turn it on', async () => {
    await openPage(page, 'Accounts');
    const connect = page.getByRole('button', { name: 'Connect Microsoft' });
    await expect(connect.isDisabled()).resolves.toBe(true);
    await expect(connect.getAttribute('aria-describedby')).resolves.toBe('microsoft-not-configured');
    const note = page.locator('#microsoft-not-configured');
    await expect(note.getAttribute('role')).resolves.toBe('note');
    await expect(note.textContent()).resolves.toContain(
      'MICROSOFT_CLIENT_ID and MICROSOFT_CLIENT_SECRET are not set',
    );
    await expect(note.textContent()).resolves.toContain(`${gw.url}/oauth/microsoft/callback`);
    await expect(page.getByLabel('Microsoft permission').isDisabled()).resolves.toBe(true);
    // Looks disabled: not the accent colour of a usable button, and no pointer.
    const style = await connect.evaluate((button) => {
      // Runs in the page (the test's own types have no DOM).
      const view = globalThis as unknown as {
        getComputedStyle(element: unknown): { cursor: string; backgroundColor: string };
      };
      const css = view.getComputedStyle(button);
      return { cursor: css.cursor, background: css.backgroundColor };
    });
    expect(style.cursor).toBe('not-allowed');
    expect(style.background).toBe('rgb(213, 217, 223)');
    await screenshot(page, '64-microsoft-not-configured');
  });
});
