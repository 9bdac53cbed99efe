import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPage, personOf, screenshot, startDashboard } from './browser.ts';
import type { TestGateway } from './harness.ts';
import {
  authorize,
  type Callback,
  consentRequest,
  pkce,
  registerClient,
  startCallback,
} from './oauth-flow.ts';

/**
 * The hijack policy of an OAuth-connected app in Chromium: chosen on the consent page, shown and
 * changed per app under Connected apps (each change audited), and read-only once revoked.
 */
describe('the dashboard in Chromium: the hijack policy of a connected app', () => {
  let gw: TestGateway;
  let callback: Callback;
  let browser: Browser;
  let page: Page;
  let appId: string;

  const policyOf = async (id: string) =>
    (
      await gw.db.pool.query<{ hijack_policy: string }>('SELECT hijack_policy FROM api_keys WHERE id = $1', [
        id,
      ])
    ).rows[0]?.hijack_policy;

  beforeAll(async () => {
    callback = await startCallback();
    ({ gw, browser, page } = await startDashboard({ viewport: { width: 1400, height: 900 } }));
    await gw.localCalendar((await personOf(gw)).tenantId, 'Work');
  });

  afterAll(async () => {
    await browser?.close();
    await callback?.close();
    await gw?.stop();
  });

  it('the consent page offers the policy (Ask by default), and the choice is stored on the connection', async () => {
    const registered = await registerClient(gw, {
      client_name: 'Hosted Agent',
      redirect_uris: [callback.redirectUri],
    });
    expect(registered.status).toBe(201);
    const started = await authorize(gw, {
      response_type: 'code',
      client_id: registered.body.client_id,
      redirect_uri: callback.redirectUri,
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
      resource: gw.mcpUrl,
    });
    const request = consentRequest(started.location);
    await page.goto(`${gw.url}/consent?${new URLSearchParams({ request })}`);
    await page
      .getByRole('heading', { level: 1, name: 'Allow Hosted Agent to use your calendars?' })
      .waitFor();
    const group = page.getByRole('group', { name: 'After suspicious content' });
    const select = group.getByLabel('Confirmations');
    await expect(select.inputValue()).resolves.toBe('ask');
    await expect(group.textContent()).resolves.toContain(
      'Strict: always in the dashboard. Off: no check. You can change this later under Connected apps.',
    );
    await select.selectOption({ label: 'Strict' });
    await screenshot(page, '43-consent-hijack-policy');
    const arrived = callback.next();
    await page.getByRole('button', { name: 'Allow access' }).click();
    expect((await arrived).get('code')).toBeTruthy();
    await page.waitForURL((url) => url.href.startsWith(callback.redirectUri));

    const { rows } = await gw.db.pool.query<{ id: string }>(
      "SELECT id FROM api_keys WHERE kind = 'oauth' AND name = 'Hosted Agent'",
    );
    appId = rows[0]?.id as string;
    expect(await policyOf(appId)).toBe('strict');
  });

  it('Connected apps shows the policy per app and saves a change, announced and audited', async () => {
    await page.goto(gw.url);
    await page.locator('main[data-ready="true"]').waitFor();
    await openPage(page, 'Connected apps');
    await page.getByRole('columnheader', { name: 'After suspicious content' }).waitFor();
    const select = page.getByLabel('After suspicious content for Hosted Agent');
    await expect(select.inputValue()).resolves.toBe('strict');
    await expect(page.locator('main').textContent()).resolves.toContain(
      'Ask: the app shows you a form when it can, else you confirm under “Waiting for confirmation” on API keys. Strict: always there. Off: no check.',
    );

    await page.getByRole('button', { name: 'Save Hosted Agent' }).click();
    await page.getByRole('status').getByText('Nothing to save for Hosted Agent.').waitFor();

    await select.selectOption({ label: 'Off' });
    await page.getByRole('button', { name: 'Save Hosted Agent' }).click();
    await page.getByRole('status').getByText('Saved Hosted Agent: after suspicious content off.').waitFor();
    await expect(page.getByLabel('After suspicious content for Hosted Agent').inputValue()).resolves.toBe(
      'off',
    );
    await screenshot(page, '44-connected-app-policy');
    expect(await policyOf(appId)).toBe('off');

    await page.reload();
    await page.locator('main[data-ready="true"]').waitFor();
    await expect(page.getByLabel('After suspicious content for Hosted Agent').inputValue()).resolves.toBe(
      'off',
    );

    await gw.runtime.deps.audit.flush();
    const audit = await gw.db.pool.query<{ target: string[] }>(
      "SELECT target FROM audit_log WHERE kind = 'dashboard' AND tool IN ('connected_app.approve', 'connected_app.update') ORDER BY id",
    );
    expect(audit.rows.map((row) => row.target)).toEqual([
      ['hijackPolicy=strict'],
      [appId, 'hijackPolicy=off'],
    ]);
  });

  it('a revoked app shows its policy as text, with nothing to change', async () => {
    await page.getByRole('button', { name: 'Revoke Hosted Agent' }).click();
    await page
      .getByRole('dialog', { name: 'Revoke Hosted Agent?' })
      .getByRole('button', { name: 'Revoke', exact: true })
      .click();
    await page.getByRole('status').getByText('Revoked Hosted Agent.').waitFor();
    const row = page.getByRole('row', { name: /Hosted Agent/ });
    await expect(row.getByRole('combobox').count()).resolves.toBe(0);
    await expect(row.getByRole('cell').nth(4).textContent()).resolves.toBe('Off');
    await expect(row.getByRole('button').count()).resolves.toBe(0);
  });
});
