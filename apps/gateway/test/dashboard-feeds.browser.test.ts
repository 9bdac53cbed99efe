/**
 * The secret iCal address in Chromium: on the Calendars page a person makes a calendar's address
 * (after a warning), the page shows it once, a calendar app (here: fetch) reads the calendar
 * there, and revoking it stops the address at once.
 */
import { randomBytes } from 'node:crypto';
import type { GoogleEmulator } from '@calgate/google-emulator';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDashboard, personOf, screenshot } from './browser.ts';
import { startGatewayWithGoogle } from './google-fixture.ts';
import type { TestGateway } from './harness.ts';

const CLIENT = { clientId: 'calgate-feeds.apps.googleusercontent.com', clientSecret: 'feeds-secret' };

describe('the secret iCal address in the dashboard', () => {
  let emulator: GoogleEmulator;
  let gw: TestGateway;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    ({ emulator, gw } = await startGatewayWithGoogle(CLIENT, { accounts: [] }, () => ({
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    })));
    ({ browser, page } = await openDashboard(gw, { viewport: { width: 1280, height: 860 } }));
    const { tenantId } = await personOf(gw);
    await gw.localCalendar(tenantId, 'Team holidays', 'Europe/Berlin');
    await gw.runtime.keys.create(tenantId, { name: 'agent' });
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    await emulator?.close();
  });

  it('makes an address shown once, which serves the calendar until it is revoked', async () => {
    await page.goto(`${gw.url}/matrix`);
    await page.locator('main[data-ready="true"]').waitFor();
    await page.getByRole('button', { name: 'iCal address' }).first().waitFor();
    const row = page.getByRole('row').filter({ hasText: 'Team holidays' });
    await row.getByRole('button', { name: 'iCal address' }).click();
    await page.getByRole('dialog', { name: 'Make a secret iCal address for Team holidays?' }).waitFor();
    await page.getByRole('button', { name: 'Make address' }).click();
    const field = page.getByRole('textbox', { name: 'iCal address of Team holidays' });
    await field.waitFor();
    const url = await field.inputValue();
    expect(url).toMatch(
      new RegExp(`^${gw.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/feeds/cgf_[A-Za-z0-9_-]{43}\\.ics$`),
    );
    await screenshot(page, '60-ical-address');
    const served = await fetch(url);
    expect(served.status).toBe(200);
    expect(await served.text()).toContain('X-WR-CALNAME:Team holidays');

    await row.getByRole('button', { name: 'Revoke iCal address' }).click();
    await page.getByRole('button', { name: 'Revoke address' }).click();
    await page.getByText('iCal address revoked.').waitFor();
    expect((await fetch(url)).status).toBe(404);
    await screenshot(page, '61-ical-address-revoked');
  });
});
