import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';

/** Screenshots land here (git-ignored) for a reviewer to look at. */
export const ARTIFACTS = fileURLToPath(new URL('../../../artifacts/dashboard/', import.meta.url));

/** Debian's Chromium, headless, with nothing phoning home. */
export async function launchChromium(): Promise<Browser> {
  await mkdir(ARTIFACTS, { recursive: true });
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true });
}

/** Follows a dashboard link the way a keyboard user would, and waits for the page to be drawn. */
export async function openPage(page: Page, title: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: title }).press('Enter');
  await page.getByRole('heading', { level: 1, name: title }).waitFor();
  await page.locator('main[data-ready="true"]').waitFor();
}
