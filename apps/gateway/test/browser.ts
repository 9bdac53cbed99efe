import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { freePort } from '@calgate/testkit';
import {
  type Browser,
  type BrowserContextOptions,
  chromium,
  type Download,
  type Page,
} from 'playwright-core';
import { inject } from 'vitest';
import { CHROMIUM_ARGS, chromiumPath } from './chromium-server.ts';
import { connectClient, startTestGateway, type TestGateway } from './harness.ts';

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

export interface DashboardOptions {
  /** The page's size; 1280×900 unless given. */
  viewport?: { width: number; height: number };
  /** Who signs up: FIRST_OWNER unless given. */
  owner?: { email: string; password: string };
  /** The workspace's time zone, chosen at sign-up; UTC unless given. */
  timeZone?: string;
  /** More of the page's browser context: downloads, locale, the browser's own time zone. */
  context?: BrowserContextOptions;
}

/**
 * The run's Chromium with one page, on which the first owner has signed up to the dashboard of
 * `gw` (signUp) and sees the overview.
 */
export async function openDashboard(
  gw: { url: string },
  options: DashboardOptions = {},
): Promise<{ browser: Browser; page: Page }> {
  const { viewport = { width: 1280, height: 900 }, owner = FIRST_OWNER, timeZone, context } = options;
  const browser = await launchChromium();
  const page = await browser.newPage({ ...context, viewport });
  await signUp(page, gw.url, owner.email, owner.password, timeZone);
  return { browser, page };
}

/**
 * The dashboard fixture: a gateway on its own address with `env` besides (startDashboardGateway)
 * and the run's Chromium signed up to it (openDashboard).
 */
export async function startDashboard(
  options: DashboardOptions & { env?: Record<string, string> } = {},
): Promise<{ gw: TestGateway; browser: Browser; page: Page }> {
  const gw = await startDashboardGateway(options.env);
  try {
    return { gw, ...(await openDashboard(gw, options)) };
  } catch (error) {
    // The caller never receives the gateway to stop it.
    await gw.stop();
    throw error;
  }
}

/** The signed-up person `email` (the first owner unless given): their id and their tenant's. */
export async function personOf(
  gw: TestGateway,
  email = FIRST_OWNER.email,
): Promise<{ id: string; tenantId: string }> {
  const { rows } = await gw.db.pool.query<{ id: string; tenant_id: string }>(
    'SELECT id, tenant_id FROM users WHERE email = $1',
    [email],
  );
  const person = rows[0];
  if (person === undefined) {
    throw new Error(`${email} has not signed up`);
  }
  return { id: person.id, tenantId: person.tenant_id };
}

/** Creates an API key named `name` on the API keys page; returns its secret, shown once. */
export async function createKey(page: Page, name: string): Promise<string> {
  await openPage(page, 'API keys');
  await page.getByLabel('Name').fill(name);
  await page.getByRole('button', { name: 'Create key' }).click();
  return (await page.locator('#secret').textContent()) ?? '';
}

/**
 * Connects the Google account `account` for writing from the Accounts page, through the
 * emulator's consent page, and waits for the callback's page.
 */
export async function connectGoogle(page: Page, account: string): Promise<void> {
  await openPage(page, 'Accounts');
  await page.getByLabel('Calgate may').selectOption('write');
  await page.getByRole('button', { name: 'Connect Google' }).click();
  await consent(page, account);
  await page.getByRole('heading', { name: `Connected ${account}` }).waitFor();
}

/** The names of the calendars the agent of a key (`secret`) sees through MCP, sorted. */
export async function calendarsOf(mcpUrl: string, secret: string): Promise<string[]> {
  const client = await connectClient(mcpUrl, secret);
  const result = await client.callTool({ name: 'list_calendars', arguments: {} });
  await client.close();
  return (result.structuredContent as { calendars: { summary: string }[] }).calendars
    .map((calendar) => calendar.summary)
    .sort();
}
