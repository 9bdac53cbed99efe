/**
 * Connecting a CalDAV account in Chromium, against real Radicale and Xandikos servers: the
 * presets fill the server's address (iCloud with the link to make an app-specific password); a
 * wrong password is said on the page and saves nothing; the account and its calendars are listed
 * on the Accounts page and in the Permissions matrix, where a key is granted by ticking; an
 * account whose server refuses its stored password shows needs reauth and is reconnected with the
 * new one from the page (the key's grant kept); disconnecting takes its calendars out of the matrix.
 */
import type { Client } from '@modelcontextprotocol/client';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HARD_PASSWORD,
  startRadicale,
  startXandikos,
  type TestCaldavServer,
} from '../../../packages/providers/test/caldav/servers.ts';
import { openPage, personOf, screenshot, startDashboard } from './browser.ts';
import { caldavEnv } from './caldav-fixture.ts';
import { connectClient, type TestGateway, textOf } from './harness.ts';
import { until } from './ics-feed-refresh.ts';

interface Connection {
  id: string;
  provider: string;
  accountEmail: string | null;
  status: string;
  calendars: { id: string; summary: string }[];
}

interface Grant {
  keyId: string;
  calendarId: string;
  canRead: boolean;
  canWrite: boolean;
}

const MEETING = [
  'BEGIN:VCALENDAR',
  'VERSION:2.0',
  'PRODID:-//Hand//Written//EN',
  'BEGIN:VEVENT',
  'UID:planning@hand',
  'DTSTAMP:20260101T000000Z',
  'SUMMARY:Quarter planning',
  'DTSTART:20270105T140000Z',
  'DTEND:20270105T150000Z',
  'END:VEVENT',
  'END:VCALENDAR',
  '',
].join('\r\n');

describe.each([
  ['Radicale', startRadicale],
  ['Xandikos', startXandikos],
] as const)('connecting a CalDAV account in the dashboard (%s)', (name, start) => {
  let server: TestCaldavServer;
  let gw: TestGateway;
  let browser: Browser;
  let page: Page;
  let agent: { id: string; secret: string };
  let client: Client | undefined;

  beforeAll(async () => {
    server = await start();
    await server.makeCalendar(new URL(`${server.home}work/`).pathname, {
      displayName: 'Work',
      timeZone: 'Europe/Berlin',
    });
    await server.makeCalendar(new URL(`${server.home}family/`).pathname, { displayName: 'Family' });
    await server.seed(`${new URL(`${server.home}work/`).pathname}planning.ics`, MEETING);
    ({ gw, browser, page } = await startDashboard({
      env: caldavEnv(),
      viewport: { width: 1280, height: 900 },
    }));
    const { tenantId } = await personOf(gw);
    const made = await gw.runtime.keys.create(tenantId, { name: 'agent' });
    agent = { id: made.key.id, secret: made.secret };
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await browser?.close();
    await gw?.stop();
    await server?.stop();
  });

  const form = () => page.getByRole('region', { name: 'Connect a CalDAV account' });
  /** The account's identity: its username qualified by its server (neither server gives an address). */
  const alice = () => `alice@${new URL(server.root).host}`;
  const account = () => page.locator(`li[data-account="${alice()}"]`);

  /** GET /api/v1/connections as the signed-in page sees it. */
  const connections = async (): Promise<Connection[]> => {
    const answer = await page.request.get(`${gw.url}/api/v1/connections`);
    expect(answer.status()).toBe(200);
    return ((await answer.json()) as { connections: Connection[] }).connections;
  };
  const caldav = async () => (await connections()).find((c) => c.provider === 'caldav');
  const grants = async (): Promise<Grant[]> => {
    const answer = await page.request.get(`${gw.url}/api/v1/matrix`);
    expect(answer.status()).toBe(200);
    return ((await answer.json()) as { grants: Grant[] }).grants;
  };
  /** The key's list_events on Work in the week of the seeded meeting. */
  const listWork = async (calendarId: string) => {
    client ??= await connectClient(gw.mcpUrl, agent.secret);
    return client.callTool({
      name: 'list_events',
      arguments: { calendarId, timeMin: '2027-01-04T00:00:00Z', timeMax: '2027-01-11T00:00:00Z' },
    });
  };

  // The presets touch no server: checked once.
  if (name === 'Radicale') {
    it('fills the server address from each preset, iCloud with the link to an app-specific password', async () => {
      await openPage(page, 'Accounts');
      const service = form().getByLabel('Service');
      const address = form().getByLabel('Server address');
      const appPassword = form().getByRole('link', { name: 'How to make one' });

      await service.selectOption({ label: 'iCloud' });
      await expect(address.inputValue()).resolves.toBe('https://caldav.icloud.com');
      await form()
        .getByText('iCloud needs an app-specific password, not your Apple Account password.')
        .waitFor();
      await expect(appPassword.getAttribute('href')).resolves.toBe('https://support.apple.com/en-us/102654');
      await screenshot(page, '80-caldav-icloud-preset');

      await service.selectOption({ label: 'Fastmail' });
      await expect(address.inputValue()).resolves.toBe('https://caldav.fastmail.com');
      await form().getByText('Fastmail needs an app password').waitFor();
      await expect(appPassword.count()).resolves.toBe(0);

      // A Nextcloud and any other server live at the person's own address: the field starts it.
      await service.selectOption({ label: 'Nextcloud' });
      await expect(address.inputValue()).resolves.toBe('https://');
      await form().getByText("Your Nextcloud's address").waitFor();

      await service.selectOption({ label: 'Any CalDAV server' });
      await expect(address.inputValue()).resolves.toBe('https://');
      await form().getByText("The server's CalDAV address, a principal or one calendar's URL.").waitFor();
      await expect(appPassword.count()).resolves.toBe(0);

      // Back to iCloud after a typed address: the preset's address again.
      await address.fill('https://cloud.example.com');
      await service.selectOption({ label: 'iCloud' });
      await expect(address.inputValue()).resolves.toBe('https://caldav.icloud.com');
    });
  }

  it('says a wrong password plainly on the page and saves nothing', async () => {
    await openPage(page, 'Accounts');
    const before = await connections();
    await form().getByLabel('Service').selectOption({ label: 'Any CalDAV server' });
    await form().getByLabel('Server address').fill(server.root);
    await form().getByLabel('Username').fill(server.username);
    await form().getByLabel('Password').fill('not-the-password');
    await form().getByRole('button', { name: 'Connect CalDAV account' }).click();
    const alert = form().getByRole('alert');
    await alert.waitFor();
    const said = (await alert.textContent()) ?? '';
    expect(said).toContain(
      `The CalDAV server at ${new URL(server.root).origin} refused the username 'alice' with this password: the password is wrong`,
    );
    expect(said).not.toContain('not-the-password');
    // The password is not left in the form for another try to resend.
    await expect(form().getByLabel('Password').inputValue()).resolves.toBe('');
    expect(await connections()).toEqual(before);
    await expect(account().count()).resolves.toBe(0);
  });

  it('connects with the right password: the account and its calendars on the Accounts page, then granted by ticking in the matrix', async () => {
    await page.goto(`${gw.url}/accounts`);
    await page.locator('main[data-ready="true"]').waitFor();
    await form().getByLabel('Service').selectOption({ label: 'Any CalDAV server' });
    await form().getByLabel('Server address').fill(server.root);
    await form().getByLabel('Username').fill(server.username);
    await form().getByLabel('Password').fill(HARD_PASSWORD);
    await form().getByLabel('Give every existing API key').selectOption('none');
    await form().getByRole('button', { name: 'Connect CalDAV account' }).click();
    await form()
      .getByRole('status')
      .filter({ hasText: `Connected ${alice()}:` })
      .waitFor();
    await account().getByText('CalDAV', { exact: true }).waitFor();
    const calendars = account().getByRole('list', { name: `Calendars of ${alice()}` });
    await calendars.getByText('Work').waitFor();
    await calendars.getByText('Family').waitFor();
    await screenshot(page, `81-caldav-connected-${name.toLowerCase()}`);

    const connected = await caldav();
    expect(connected?.status).toBe('active');
    const work = connected?.calendars.find((c) => c.summary === 'Work')?.id as string;
    expect(work).toBeDefined();
    // "No access yet": nothing granted on connecting, so the key cannot read it.
    expect((await grants()).filter((g) => g.keyId === agent.id)).toEqual([]);

    await openPage(page, 'Permissions');
    await page.getByRole('rowheader', { name: /Family/ }).waitFor();
    await page.getByRole('checkbox', { name: 'Write Work with agent' }).check();
    await page.getByText('agent on Work: read and write.').waitFor();
    await expect(page.getByRole('checkbox', { name: 'Read Work with agent' }).isChecked()).resolves.toBe(
      true,
    );
    expect((await grants()).filter((g) => g.keyId === agent.id)).toEqual([
      { keyId: agent.id, calendarId: work, canRead: true, canWrite: true },
    ]);
    await screenshot(page, `82-caldav-matrix-${name.toLowerCase()}`);

    gw.forgetKeys((await personOf(gw)).tenantId);
    const listed = await listWork(work);
    expect(listed.isError, textOf(listed)).toBeFalsy();
    expect(textOf(listed)).toContain('Quarter planning');
  }, 60_000);

  it('shows the account needs reauth once the server refuses its password, and reconnects it with the new one', async () => {
    const connected = (await caldav()) as Connection;
    const work = connected.calendars.find((c) => c.summary === 'Work')?.id as string;
    const password = 'a new pässword: after the old one leaked';
    server.changePassword(password);
    gw.forgetKeys((await personOf(gw)).tenantId);
    // The key's next read reaches the server, which refuses the stored password.
    const refused = await listWork(work);
    expect(refused.isError).toBe(true);
    await until('needs_reauth', async () => (await caldav())?.status === 'needs_reauth');

    // The overview's banner names the account and links to its reconnecting.
    await page.goto(gw.url);
    await page.locator('main[data-ready="true"]').waitFor();
    const banner = page.locator('.reauth-banner');
    await banner
      .getByText(
        'An account needs reconnecting: the CalDAV server no longer accepts its password, so its calendars cannot be reached.',
      )
      .waitFor();
    await banner.getByRole('link', { name: `Reconnect ${alice()}` }).click();
    await page.getByRole('heading', { level: 1, name: 'Accounts' }).waitFor();
    await page.locator('main[data-ready="true"]').waitFor();
    // The form is filled for this account; only the new password is asked for.
    const filled = async () => {
      await expect(page.evaluate('document.activeElement?.id')).resolves.toBe(
        await form().getByLabel('Password').getAttribute('id'),
      );
      await expect(form().getByLabel('Username').inputValue()).resolves.toBe('alice');
      await expect(form().getByLabel('Server address').inputValue()).resolves.toBe(server.root);
      await expect(form().getByLabel('Give every existing API key').inputValue()).resolves.toBe('none');
    };
    await filled();
    await account().getByText('needs reauth').waitFor();
    await account().getByText('The CalDAV server no longer accepts this account’s password.').waitFor();
    await screenshot(page, `83-caldav-needs-reauth-${name.toLowerCase()}`);
    // The account's own button fills the form the same way.
    await form().getByLabel('Username').fill('');
    await form().getByLabel('Service').selectOption({ label: 'iCloud' });
    await account()
      .getByRole('button', { name: `Reconnect ${alice()}` })
      .click();
    await filled();
    await form().getByLabel('Password').fill(password);
    await form().getByRole('button', { name: 'Connect CalDAV account' }).click();
    await form()
      .getByRole('status')
      .filter({ hasText: `Reconnected ${alice()}:` })
      .waitFor();
    await account().getByText('active', { exact: true }).waitFor();
    await expect(account().getByText('needs reauth').count()).resolves.toBe(0);

    const after = (await caldav()) as Connection;
    expect(after.id).toBe(connected.id);
    expect(after.status).toBe('active');
    // The grant ticked before is kept.
    expect((await grants()).filter((g) => g.keyId === agent.id)).toEqual([
      { keyId: agent.id, calendarId: work, canRead: true, canWrite: true },
    ]);
    gw.forgetKeys((await personOf(gw)).tenantId);
    const listed = await listWork(work);
    expect(listed.isError, textOf(listed)).toBeFalsy();
    expect(textOf(listed)).toContain('Quarter planning');
  }, 60_000);

  it('disconnects the account from the page: its calendars leave the matrix', async () => {
    // Xandikos makes a calendar of its own besides Work and Family.
    const calendars = ((await caldav()) as Connection).calendars.length;
    await openPage(page, 'Accounts');
    await page.getByRole('button', { name: `Disconnect ${alice()}` }).click();
    const dialog = page.getByRole('dialog', { name: `Disconnect ${alice()}?` });
    await dialog.getByText(`Its ${calendars} calendars and their grants on 1 key are removed`).waitFor();
    await dialog.getByRole('button', { name: 'Disconnect' }).click();
    await page.getByText(`Disconnected ${alice()}.`).waitFor();
    expect(await caldav()).toBeUndefined();
    expect((await grants()).filter((g) => g.keyId === agent.id)).toEqual([]);

    await openPage(page, 'Permissions');
    await expect(page.getByRole('rowheader', { name: /Work|Family/ }).count()).resolves.toBe(0);
    await expect(page.getByRole('checkbox', { name: 'Write Work with agent' }).count()).resolves.toBe(0);
  });
});
