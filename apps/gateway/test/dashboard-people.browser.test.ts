import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passwordResetLink } from '../src/cli/people.ts';
import { uniqueEmail } from './api-client.ts';
import { FIRST_OWNER, openPage, screenshot, startDashboard } from './browser.ts';
import type { TestGateway } from './harness.ts';

const MEMBER_PASSWORD = 'a member password of length';

describe('the dashboard in Chromium: inviting people, roles and reset links', () => {
  let gw: TestGateway;
  let browser: Browser;
  let owner: Page;
  let link: string;
  const memberEmail = uniqueEmail('mia');

  beforeAll(async () => {
    ({
      gw,
      browser,
      page: owner,
    } = await startDashboard({
      viewport: { width: 1280, height: 860 },
      owner: { ...FIRST_OWNER, email: uniqueEmail('owner') },
    }));
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
  });

  it('lets the owner invite a member and shows the link to pass on (no SMTP)', async () => {
    await openPage(owner, 'Members');
    await owner.getByLabel('Email').fill(memberEmail);
    await owner.getByLabel('Role').selectOption('member');
    await owner.getByRole('button', { name: 'Invite' }).click();
    const shown = owner.locator('code.invite-link');
    await shown.waitFor();
    link = (await shown.textContent()) ?? '';
    expect(link).toMatch(new RegExp(`^${gw.url}/invite\\?token=[A-Za-z0-9_-]{43}$`));
    await owner.getByText(`${memberEmail} as member`).waitFor();
    await screenshot(owner, 'members-invited');
  });

  it('signs the member in from the link in a fresh browser, without Members admin controls', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(link);
    await page.getByRole('heading', { level: 1, name: 'Join My Calgate' }).waitFor();
    await expect(page.locator('.invite-email').textContent()).resolves.toBe(memberEmail);
    await page.getByLabel('New password (at least 12 characters)').fill(MEMBER_PASSWORD);
    await page.getByRole('button', { name: 'Join and sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await expect(page.locator('header .who').textContent()).resolves.toContain(memberEmail);

    await openPage(page, 'Members');
    await page.getByRole('cell', { name: `${memberEmail} (you)` }).waitFor();
    expect(await page.getByRole('button', { name: 'Remove' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Invite' }).count()).toBe(0);
    expect(await page.locator('select').count()).toBe(0);
    await screenshot(page, 'members-as-member');
    await context.close();
  });

  it('lets the owner change the role, and remove only after naming the person', async () => {
    await owner.reload();
    await owner.locator('main[data-ready="true"]').waitFor();
    await owner.getByLabel(`Role of ${memberEmail}`).selectOption('auditor');
    await owner.getByText(`${memberEmail} is now auditor.`).waitFor();
    const { rows } = await gw.db.pool.query('SELECT role FROM users WHERE email = $1', [memberEmail]);
    expect(rows[0].role).toBe('auditor');

    await owner.getByRole('button', { name: 'Remove' }).click();
    const dialog = owner.getByRole('dialog', { name: `Remove ${memberEmail}?` });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await gw.db.pool.query('SELECT 1 FROM users WHERE email = $1', [memberEmail])).rowCount).toBe(1);
  });

  it('sets a new password from a reset link made by the CLI, and signs in', async () => {
    const reset = await passwordResetLink(
      gw.runtime.db,
      { publicUrl: gw.url, smtp: { url: undefined, from: 'c@example.test' } },
      memberEmail,
    );
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(reset.link);
    await page.getByRole('heading', { level: 1, name: 'Set a new password' }).waitFor();
    await page.getByLabel('New password (at least 12 characters)').fill('the reset password now');
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await expect(page.locator('header .who').textContent()).resolves.toContain(memberEmail);

    // The link works once.
    await page.goto(reset.link);
    await page.getByLabel('New password (at least 12 characters)').fill('yet another password');
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByText('This password reset link was already used').waitFor();
    await context.close();
  });
});
