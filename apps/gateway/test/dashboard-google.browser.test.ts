import type { GoogleEmulator } from '@calgate/google-emulator';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consent, createKey, openDashboard, openPage, screenshot, startDashboard } from './browser.ts';
import { startGatewayWithGoogle } from './google-fixture.ts';
import { connectClient, type TestGateway } from './harness.ts';

const CLIENT = { clientId: 'calgate-least.apps.googleusercontent.com', clientSecret: 'least-secret' };
const ANN = 'ann@example.com';
const TEAM = 'team@group.calendar.google.com';
const AT = { start: { dateTime: '2027-03-01T09:00:00Z' }, end: { dateTime: '2027-03-01T10:00:00Z' } };

/** Calls create_event on TEAM as the key and returns whether it was refused, with the text. */
async function createOnTeam(mcpUrl: string, secret: string): Promise<{ refused: boolean; text: string }> {
  const client = await connectClient(mcpUrl, secret);
  const result = await client.callTool({
    name: 'create_event',
    arguments: { calendarId: TEAM, summary: 'Plan', ...AT },
  });
  await client.close();
  const text = (result.content as { type: string; text?: string }[])
    .map((part) => part.text ?? '')
    .join('\n');
  return { refused: result.isError === true, text };
}

describe('the dashboard in Chromium: Google read only first, writing allowed later', () => {
  let emulator: GoogleEmulator;
  let gw: TestGateway;
  let browser: Browser;
  let page: Page;
  let secret: string;

  beforeAll(async () => {
    const started = await startGatewayWithGoogle(CLIENT, {
      accounts: [{ email: ANN, timeZone: 'Europe/Berlin', calendars: [{ id: TEAM, summary: 'Team' }] }],
    });
    ({ emulator, gw } = started);
    ({ browser, page } = await openDashboard(gw));
    secret = await createKey(page, 'bot');
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    await emulator?.close();
  });

  const account = () => page.locator(`li[data-account="${ANN}"]`);

  it('connects read only by default: Google is asked only to read, and the account is marked read-only', async () => {
    await openPage(page, 'Accounts');
    await expect(page.getByLabel('Calgate may').inputValue()).resolves.toBe('read');
    await page.getByRole('button', { name: 'Connect Google' }).click();
    await page.waitForURL((target) => target.href.startsWith(emulator.url));
    await page.locator('[data-scope="https://www.googleapis.com/auth/calendar.readonly"]').waitFor();
    await expect(
      page.locator('[data-scope="https://www.googleapis.com/auth/calendar"]').count(),
    ).resolves.toBe(0);
    await expect(
      page.locator('[data-scope="https://www.googleapis.com/auth/calendar.events"]').count(),
    ).resolves.toBe(0);
    await consent(page, ANN);
    await page.getByRole('heading', { name: `Connected ${ANN}` }).waitFor();
    await page.goto(`${gw.url}/accounts`);
    await page.locator('main[data-ready="true"]').waitFor();
    await account().getByText('read-only', { exact: true }).waitFor();
    await account()
      .getByRole('link', { name: `Allow writing for ${ANN}` })
      .waitFor();
    await screenshot(page, '50-google-read-only');
  });

  it('offers no Write on a read-only account in the matrix, and the agent is told how to upgrade', async () => {
    await openPage(page, 'Permissions');
    // "Give every existing API key: Read and write" gave Read where Calgate may not write.
    await expect(page.getByLabel('Read Team with bot').isChecked()).resolves.toBe(true);
    await expect(page.getByLabel('Write Team with bot').isDisabled()).resolves.toBe(true);
    await expect(page.getByLabel(`Write ${ANN} with bot`).isDisabled()).resolves.toBe(true);
    // With Write on another calendar the agent has create_event, and is told why Team refuses.
    const { rows } = await gw.db.pool.query<{ id: string; tenant_id: string }>(
      `SELECT id, tenant_id FROM api_keys WHERE name = 'bot'`,
    );
    const key = rows[0];
    if (key === undefined) {
      throw new Error('the key bot is missing');
    }
    const desk = await gw.localCalendar(key.tenant_id, 'Desk');
    await gw.grant(key.tenant_id, key.id, desk, { read: true, write: true });
    const refused = await createOnTeam(gw.mcpUrl, secret);
    expect(refused.refused).toBe(true);
    expect(refused.text).toContain(
      `Calgate has read-only access to ${ANN}, so calendar '${TEAM}' cannot be written; upgrade it on the Accounts page (Allow writing for ${ANN}).`,
    );
    expect(emulator.admin.events(TEAM)).toEqual([]);
  });

  it('"Allow writing" asks Google for write access to the same account; then Write can be ticked', async () => {
    await openPage(page, 'Accounts');
    await account()
      .getByRole('link', { name: `Allow writing for ${ANN}` })
      .click();
    await page.waitForURL((target) => target.href.startsWith(emulator.url));
    await page.locator('[data-scope="https://www.googleapis.com/auth/calendar.events"]').waitFor();
    await screenshot(page, '51-google-upgrade-consent');
    await consent(page, ANN);
    await page.getByRole('heading', { name: `Writing allowed for ${ANN}` }).waitFor();
    await page.getByRole('link', { name: 'Back to Accounts' }).click();
    await page.getByRole('heading', { level: 1, name: 'Accounts' }).waitFor();
    await page.locator('main[data-ready="true"]').waitFor();
    await account().getByRole('heading', { name: ANN }).waitFor();
    await expect(account().getByText('read-only', { exact: true }).count()).resolves.toBe(0);
    await expect(
      account()
        .getByRole('link', { name: /Allow writing/ })
        .count(),
    ).resolves.toBe(0);
    await screenshot(page, '52-google-writable');

    // Grants are unchanged by the upgrade: Read stays, Write is now offered and takes effect.
    await openPage(page, 'Permissions');
    await expect(page.getByLabel('Write Team with bot').isChecked()).resolves.toBe(false);
    await page.getByLabel('Write Team with bot').check();
    await page.getByText('bot on Team: read and write.').waitFor();
    await expect(page.getByLabel('Write Team with bot').isChecked()).resolves.toBe(true);
    const written = await createOnTeam(gw.mcpUrl, secret);
    expect(written.refused, written.text).toBe(false);
    expect(emulator.admin.events(TEAM).map((event) => event.summary)).toEqual(['Plan']);
  });
});

describe('the dashboard in Chromium: Google not configured', () => {
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

  it('shows Connect Google disabled, with why and how to turn it on', async () => {
    await openPage(page, 'Accounts');
    const connect = page.getByRole('button', { name: 'Connect Google' });
    await expect(connect.isDisabled()).resolves.toBe(true);
    const note = page.getByRole('note').filter({ hasText: 'GOOGLE_CLIENT_ID' });
    await expect(note.textContent()).resolves.toContain(
      'GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET are not set',
    );
    await expect(note.textContent()).resolves.toContain(`${gw.url}/oauth/google/callback`);
    await expect(connect.getAttribute('aria-describedby')).resolves.toBe('google-not-configured');
    await screenshot(page, '53-google-not-configured');
  });
});
