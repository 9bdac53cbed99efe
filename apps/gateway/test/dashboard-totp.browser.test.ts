import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOTP_STEP_SECONDS, totpCode } from '../src/auth/totp.ts';
import { FIRST_OWNER, screenshot, startDashboard } from './browser.ts';
import type { TestGateway } from './harness.ts';

const { email: OWNER, password: PASSWORD } = FIRST_OWNER;

describe('the dashboard in Chromium: sessions one by one and two-step sign-in', () => {
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

  it('lists each session with its browser and signs out another one from its row', async () => {
    const signin = await fetch(`${gw.url}/api/v1/auth/signin`, {
      method: 'POST',
      headers: { origin: gw.url, 'content-type': 'application/json', 'user-agent': 'curl/8.5.0' },
      body: JSON.stringify({ email: OWNER, password: PASSWORD }),
    });
    expect(signin.status).toBe(200);
    const elsewhere = (signin.headers.get('set-cookie') ?? '').split(';')[0] as string;

    await page.goto(`${gw.url}/account`);
    await page.getByRole('heading', { level: 1, name: 'Your account' }).waitFor();
    const sessions = page.getByRole('list', { name: 'Signed-in sessions' }).getByRole('listitem');
    await expect.poll(() => sessions.count()).toBe(2);
    await expect
      .poll(() => sessions.filter({ hasText: '(this browser)' }).innerText())
      .toMatch(/Chrome \d+ on Linux, 127\.0\.0\.1/);
    await sessions.filter({ hasText: 'curl 8' }).waitFor();

    await page.getByRole('button', { name: 'Sign out curl 8, 127.0.0.1' }).click();
    await page.getByText('That session is signed out.').waitFor();
    await expect.poll(() => sessions.count()).toBe(1);
    expect((await fetch(`${gw.url}/api/v1/keys`, { headers: { cookie: elsewhere } })).status).toBe(401);
  });

  it('turns two-step sign-in on, shows the recovery codes once, and asks for a code at the next sign-in', async () => {
    await page.getByRole('button', { name: 'Set up two-step sign-in' }).click();
    const secret = (await page.locator('#totp-secret').innerText()).trim();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(await page.locator('#totp-uri').innerText()).toBe(
      `otpauth://totp/Calgate:${encodeURIComponent(OWNER)}?secret=${secret}&issuer=Calgate&algorithm=SHA1&digits=6&period=30`,
    );

    // A code five steps ahead is outside the ±1 window: refused.
    await page
      .getByLabel('Code from your app')
      .fill(totpCode(secret, Date.now() + 5 * TOTP_STEP_SECONDS * 1000));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByRole('alert').filter({ hasText: 'wrong, expired or already used' }).waitFor();

    await page.getByLabel('Code from your app').fill(totpCode(secret, Date.now()));
    await page.getByRole('button', { name: 'Turn on' }).click();
    const codes = page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem');
    await expect.poll(() => codes.count()).toBe(10);
    expect(await codes.first().innerText()).toMatch(/^[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}$/);
    await screenshot(page, 'totp-recovery-codes');
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByText('Two-step sign-in is on. 10 recovery codes are left.').waitFor();
    expect(await page.getByRole('list', { name: 'Recovery codes' }).count()).toBe(0);

    // Signing this browser out from its own row ends the session and returns to sign-in.
    await page.getByRole('button', { name: 'Sign out this browser' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.getByLabel('Email').fill(OWNER);
    await page.getByLabel('Password (at least 12 characters)').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const code = page.getByLabel('Code from your authenticator app, or a recovery code');
    await code.waitFor();
    expect(await page.context().cookies()).toEqual([]);
    await screenshot(page, 'totp-sign-in');

    // The confirming code spent the current step; the next step's code is within the window.
    await code.fill(totpCode(secret, Date.now() + TOTP_STEP_SECONDS * 1000));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    const cookies = await page.context().cookies();
    expect(cookies.map((cookie) => cookie.name)).toEqual(['calgate_session']);
  });
});
