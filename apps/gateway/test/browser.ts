import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { freePort } from '@calgate/testkit';
import { type Browser, chromium, type Download, type Page } from 'playwright-core';
import { inject } from 'vitest';
import { CHROMIUM_ARGS, chromiumPath } from './chromium-server.ts';
import { startTestGateway, type TestGateway } from './harness.ts';

/** Screenshots land here (git-ignored) for a reviewer to look at. */
export const ARTIFACTS = fileURLToPath(new URL('../../../artifacts/dashboard/', import.meta.url));

/**
 * The run's headless Chromium (started once, on first use, by chromium-server.ts), connected to
 * from this test file; `close()` disconnects and discards this file's contexts. Outside a Vitest
 * run with that global setup, a Chromium of its own.
 */
export async function launchChromium(): Promise<Browser> {
  await mkdir(ARTIFACTS, { recursive: true });
  const broker = inject('chromiumBroker');
  if (broker === undefined) {
    return chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS });
  }
  const answer = await fetch(`${broker}/chromium`);
  if (!answer.ok) {
    throw new Error(`Chromium did not start: ${await answer.text()}`);
  }
  const { wsEndpoint } = (await answer.json()) as { wsEndpoint: string };
  return chromium.connect(wsEndpoint);
}

/**
 * A download's contents as text. Use this, not `download.path()`: the run's Chromium is shared,
 * and Playwright gives no local path for a download of a browser it connected to.
 */
export async function downloadedText(download: Download): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of await download.createReadStream()) {
    chunks.push(Buffer.from(chunk as Uint8Array));
  }
  return Buffer.concat(chunks).toString('utf8');
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true });
}

/** Follows a dashboard link the way a keyboard user would, and waits for the page to be drawn. */
export async function openPage(page: Page, title: string): Promise<void> {
  // Every navigation renders a new <main>, even to the page already shown: mark the one on screen
  // so the wait below cannot be satisfied by it while the new render is still loading.
  await page.locator('main').evaluate((main) => main.setAttribute('data-left', 'true'));
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: title }).press('Enter');
  await page.locator('main[data-ready="true"]:not([data-left])').waitFor();
  await page.getByRole('heading', { level: 1, name: title }).waitFor();
}

/**
 * Signs up the first user of a fresh install through the first-run form and waits for the
 * overview. The workspace's time zone is chosen in the picker (the browser's is prefilled), so
 * tests do not depend on the machine's zone.
 */
export async function signUp(
  page: Page,
  baseUrl: string,
  email: string,
  password: string,
  timeZone = 'UTC',
): Promise<void> {
  await page.goto(baseUrl);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password (at least 12 characters)').fill(password);
  const zone = page.getByRole('combobox', { name: 'Time zone' });
  await zone.fill(timeZone);
  await zone.press('Enter');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
}

/** Google's consent page in the emulator: pick the account and allow. */
export async function consent(page: Page, account: string): Promise<void> {
  await page.getByLabel(account).check();
  await page.getByRole('button', { name: 'Allow' }).click();
}

/** The first owner the dashboard tests sign up. */
export const FIRST_OWNER = { email: 'owner@example.test', password: 'correct horse battery staple' };

/**
 * A free loopback port and the settings that make a gateway on it its own PUBLIC_URL, so a
 * browser's OAuth round trips come back to it. `url` is known before anything starts (an
 * emulator's redirect URI needs it).
 */
export async function ownAddress(): Promise<{ url: string; env: { PORT: string; PUBLIC_URL: string } }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  return { url, env: { PORT: String(port), PUBLIC_URL: url } };
}

/** A gateway on its own address (ownAddress) with `env` besides. */
export async function startDashboardGateway(env: Record<string, string> = {}): Promise<TestGateway> {
  return startTestGateway({ ...(await ownAddress()).env, ...env });
}

/**
 * The run's Chromium with one page of `viewport`, on which the first owner (`owner`) has signed up
 * to the dashboard of `gw` (signUp) and sees the overview.
 */
export async function openDashboard(
  gw: TestGateway,
  viewport = { width: 1280, height: 900 },
  owner = FIRST_OWNER,
): Promise<{ browser: Browser; page: Page }> {
  const browser = await launchChromium();
  const page = await browser.newPage({ viewport });
  await signUp(page, gw.url, owner.email, owner.password);
  return { browser, page };
}

/** Creates an API key named `name` on the API keys page; returns its secret, shown once. */
export async function createKey(page: Page, name: string): Promise<string> {
  await openPage(page, 'API keys');
  await page.getByLabel('Name').fill(name);
  await page.getByRole('button', { name: 'Create key' }).click();
  return (await page.locator('#secret').textContent()) ?? '';
}
