import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrapFirstRun, type FirstRun, welcomeText } from '../src/bootstrap.ts';
import { KEY_PLACEHOLDER } from '../src/client-configs.ts';
import { launchChromium, openPage, screenshot, startDashboardGateway } from './browser.ts';
import type { TestGateway } from './harness.ts';

const PASSWORD = 'correct horse battery staple';
const CLOSED =
  'Sign-up is closed: this Calgate already has an owner. To join, ask an owner or admin for an invitation link.';

/** A gateway on its own port with what `npm start` creates on an empty database. */
async function freshInstall(): Promise<{ gw: TestGateway; firstRun: FirstRun }> {
  const gw = await startDashboardGateway();
  const firstRun = await bootstrapFirstRun(gw.runtime);
  if (firstRun === undefined) {
    throw new Error('the test database already had a tenant');
  }
  return { gw, firstRun };
}

async function userCount(gw: TestGateway): Promise<number> {
  const { rows } = await gw.db.pool.query('SELECT count(*)::int AS n FROM users');
  return rows[0].n;
}

async function fillOwnerForm(page: Page, workspace: string, email: string): Promise<void> {
  await page.getByRole('heading', { level: 1, name: 'Set up Calgate' }).waitFor();
  await page.getByLabel('Workspace name').fill(workspace);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password (at least 12 characters)').fill(PASSWORD);
}

/** Where a submitted create-owner form ended: the Overview, or Sign in. */
async function outcome(page: Page): Promise<'overview' | 'sign-in'> {
  return Promise.race([
    page
      .locator('main[data-ready="true"]')
      .getByRole('heading', { level: 1, name: 'Overview' })
      .waitFor()
      .then(() => 'overview' as const),
    page
      .getByRole('button', { name: 'Sign in' })
      .waitFor()
      .then(() => 'sign-in' as const),
  ]);
}

/** Each pre's overflow beyond its box, in pixels (0 when every character is on screen). */
function clipping(page: Page): Promise<{ label: string; width: number; height: number }[]> {
  return page.locator('section.config pre').evaluateAll((pres) =>
    pres.map((pre) => ({
      label: pre.getAttribute('aria-label') ?? '',
      width: pre.scrollWidth - pre.clientWidth,
      height: pre.scrollHeight - pre.clientHeight,
    })),
  );
}

describe('a fresh install in Chromium: the create-owner form, two at once, the Overview, Accounts', () => {
  let gw: TestGateway;
  let firstRun: FirstRun;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  let owner: Page;

  beforeAll(async () => {
    ({ gw, firstRun } = await freshInstall());
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
  });

  async function newPage(timezoneId: string, width = 1280): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height: 900 }, timezoneId });
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(gw.url);
    return page;
  }

  it('opens on the create-owner form with the browser’s zone, not on Sign in', async () => {
    const page = await newPage('America/New_York');
    await page.getByRole('heading', { level: 1, name: 'Set up Calgate' }).waitFor();
    await expect(page.getByRole('button', { name: 'Sign in' }).count()).resolves.toBe(0);
    await expect(page.title()).resolves.toBe('Set up · Calgate');
    await expect(page.getByRole('combobox', { name: 'Time zone' }).inputValue()).resolves.toBe(
      'America/New_York',
    );
    await expect(
      page.getByLabel('Password (at least 12 characters)').getAttribute('autocomplete'),
    ).resolves.toBe('new-password');
    await page.context().close();
  });

  it('two people submit at the same moment: one owner; the other is told sign-up is closed and offered Sign in', async () => {
    const first = await newPage('Europe/Berlin');
    const second = await newPage('Asia/Tokyo');
    const emails = ['ann@example.test', 'bob@example.test'];
    await fillOwnerForm(first, 'Ann’s', emails[0] as string);
    await fillOwnerForm(second, 'Bob’s', emails[1] as string);
    // Enter in one, the button in the other.
    await Promise.all([
      first.getByLabel('Password (at least 12 characters)').press('Enter'),
      second.getByRole('button', { name: 'Create account' }).click(),
    ]);
    const ends = await Promise.all([outcome(first), outcome(second)]);
    expect([...ends].sort()).toEqual(['overview', 'sign-in']);
    expect(await userCount(gw)).toBe(1);
    const winner = ends[0] === 'overview' ? 0 : 1;
    owner = winner === 0 ? first : second;
    const loser = winner === 0 ? second : first;

    await owner.getByText(`${emails[winner]} · ${winner === 0 ? 'Ann’s' : 'Bob’s'}`).waitFor();
    await expect(loser.getByRole('main').textContent()).resolves.toContain(CLOSED);
    // Their email stays filled in; their password is not an account here.
    await expect(loser.getByLabel('Email').inputValue()).resolves.toBe(emails[1 - winner]);
    await screenshot(loser, '93-first-run-second-submission');
    await loser.getByLabel('Password (at least 12 characters)').fill(PASSWORD);
    await loser.getByLabel('Password (at least 12 characters)').press('Enter');
    await loser.getByText('Wrong email or password.').waitFor();
    expect(await userCount(gw)).toBe(1);
  });

  it('shows the client configurations npm start printed, each block whole, wide and narrow', async () => {
    await expect(clipping(owner)).resolves.toEqual(
      ['Claude Code', 'Claude Desktop', 'Cursor', 'Claude.ai connector', 'ChatGPT connector'].map(
        (label) => ({
          label: `${label} configuration`,
          width: 0,
          height: 0,
        }),
      ),
    );
    const shown = await owner.locator('section.config').evaluateAll((cards) =>
      cards.map((card) => ({
        label: card.querySelector('h3')?.textContent ?? '',
        text: card.querySelector('pre')?.textContent ?? '',
      })),
    );
    const printed = welcomeText(`${gw.url}/api/mcp`, firstRun);
    // The same blocks in the same order as printed, with the placeholder where the key was.
    expect(printed).toContain(
      shown
        .map(({ label, text }) => `\n${label}:\n${text.replaceAll(KEY_PLACEHOLDER, firstRun.secret)}\n`)
        .join(''),
    );
    expect(shown.filter(({ text }) => text.includes(KEY_PLACEHOLDER))).toHaveLength(3);
    await screenshot(owner, '94-first-run-configurations');

    await owner.setViewportSize({ width: 390, height: 844 });
    await expect(clipping(owner)).resolves.toEqual(
      shown.map(({ label }) => ({ label: `${label} configuration`, width: 0, height: 0 })),
    );
    await screenshot(owner, '95-first-run-configurations-narrow');
    await owner.setViewportSize({ width: 1280, height: 900 });
  });

  it('shows Connect Google disabled, looking so, and says why', async () => {
    await openPage(owner, 'Accounts');
    const connect = owner.getByRole('button', { name: 'Connect Google' });
    await expect(connect.isDisabled()).resolves.toBe(true);
    const enabled = owner.getByRole('button', { name: 'Connect CalDAV account' });
    await expect(enabled.isEnabled()).resolves.toBe(true);
    const look = (button: typeof connect) =>
      button.evaluate((element) => {
        // Runs in the page (the test's own types have no DOM).
        const view = globalThis as unknown as {
          getComputedStyle(element: unknown): { backgroundColor: string; color: string; cursor: string };
        };
        const style = view.getComputedStyle(element);
        return { background: style.backgroundColor, color: style.color, cursor: style.cursor };
      });
    const off = await look(connect);
    const on = await look(enabled);
    expect(off.cursor).toBe('not-allowed');
    expect(off.background).not.toBe(on.background);
    expect(off.color).not.toBe(on.color);
    // Its accessible description is the reason and the way to turn it on.
    const ids = ((await connect.getAttribute('aria-describedby')) ?? '').split(' ').filter(Boolean);
    expect(ids.length).toBeGreaterThan(0);
    const description = (
      await Promise.all(ids.map((id) => owner.locator(`[id="${id}"]`).textContent()))
    ).join(' ');
    expect(description).toContain(
      'Connecting Google accounts is turned off on this Calgate: GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET are not set.',
    );
    expect(description).toContain(`${gw.url}/oauth/google/callback`);
    await expect(owner.getByLabel('Calgate may').isDisabled()).resolves.toBe(true);
    await screenshot(owner, '96-first-run-google-not-configured');
  });
});

describe('a fresh install in Chromium: Create account pressed twice', () => {
  let gw: TestGateway;
  let browser: Browser;

  beforeAll(async () => {
    ({ gw } = await freshInstall());
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
  });

  it('sends the form once and lands on the Overview', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const sent: string[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/api/v1/auth/signup')) {
        sent.push(request.method());
      }
    });
    await page.goto(gw.url);
    await fillOwnerForm(page, 'Home', 'owner@example.test');
    await page.getByRole('button', { name: 'Create account' }).dblclick();
    await expect(outcome(page)).resolves.toBe('overview');
    await page.waitForLoadState('networkidle');
    expect(sent).toEqual(['POST']);
    await expect(page.getByRole('heading', { level: 1, name: 'Overview' }).isVisible()).resolves.toBe(true);
    expect(await userCount(gw)).toBe(1);
  });
});

describe('a fresh install in Chromium, opened under another address', () => {
  let browser: Browser;
  const gateways: TestGateway[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await Promise.all(gateways.map((gw) => gw.stop()));
  });

  it('localhost for 127.0.0.1: the page moves to PUBLIC_URL before anything is typed, and the owner is created', async () => {
    const { gw } = await freshInstall();
    gateways.push(gw);
    const port = new URL(gw.url).port;
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`http://localhost:${port}/accounts?from=welcome`);
    expect(page.url()).toBe(`http://127.0.0.1:${port}/accounts?from=welcome`);
    await fillOwnerForm(page, 'Home', 'owner@example.test');
    await page.getByLabel('Password (at least 12 characters)').press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Accounts' }).waitFor();
    expect(await userCount(gw)).toBe(1);
  });

  it('an address Calgate does not accept: the create-owner form stays and says why, not Sign in', async () => {
    const gw = await startDashboardGateway({ PUBLIC_URL: 'https://calgate.example' });
    gateways.push(gw);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(gw.url);
    await fillOwnerForm(page, 'Home', 'owner@example.test');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByText(`Origin ${gw.url} is not allowed`).waitFor();
    await expect(page.getByRole('heading', { level: 1, name: 'Set up Calgate' }).isVisible()).resolves.toBe(
      true,
    );
    await expect(page.getByRole('button', { name: 'Sign in' }).count()).resolves.toBe(0);
    await expect(page.getByRole('button', { name: 'Create account' }).isEnabled()).resolves.toBe(true);
    await expect(page.getByLabel('Email').inputValue()).resolves.toBe('owner@example.test');
    await screenshot(page, '97-first-run-origin-refused');
    expect(await userCount(gw)).toBe(0);
  });
});
