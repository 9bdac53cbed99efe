import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { downloadedText, FIRST_OWNER, openPage, screenshot, startDashboard } from './browser.ts';
import { rpc, type TestGateway } from './harness.ts';

const OWNER = 'auditor-owner@example.test';

describe('the audit page in Chromium: dashboard actions, filters, row detail and CSV', () => {
  let gw: TestGateway;
  let browser: Browser;
  let page: Page;
  let revoked: string;
  let agentSecret: string;

  /** A dashboard write from the signed-in page, as the page's own code sends it. */
  function write(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
    return page.evaluate(
      async ({ method, path, body }) => {
        const { csrfToken } = (await (await fetch('/api/v1/auth/csrf')).json()) as { csrfToken: string };
        const response = await fetch(path, {
          method,
          headers: {
            'x-calgate-csrf': csrfToken,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return { status: response.status, body: (await response.json()) as unknown };
      },
      { method, path, body },
    );
  }

  beforeAll(async () => {
    ({ gw, browser, page } = await startDashboard({
      owner: { ...FIRST_OWNER, email: OWNER },
      context: { acceptDownloads: true },
    }));
    const laptop = await write('POST', '/api/v1/keys', { name: 'laptop' });
    revoked = (laptop.body as { key: { id: string } }).key.id;
    expect((await write('POST', `/api/v1/keys/${revoked}/revoke`)).status).toBe(200);
    const agent = await write('POST', '/api/v1/keys', { name: 'agent' });
    agentSecret = (agent.body as { secret: string }).secret;
    const answer = await rpc(
      `${gw.url}/api/mcp`,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_calendars', arguments: {} } },
      { authorization: `Bearer ${agentSecret}`, 'user-agent': 'claude-code/2.1.0' },
    );
    expect(answer.status).toBe(200);
    await gw.runtime.deps.audit.flush();
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
  });

  it('filters by actor and by tool or action, and opens a row from the keyboard', async () => {
    await openPage(page, 'Audit log');
    await page.getByLabel('Actor').selectOption({ label: OWNER });
    await page.getByLabel('Tools and actions').selectOption(['key.revoke']);
    await page.getByRole('button', { name: 'Filter' }).click();
    const rows = page.locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(1);
    await expect(rows.first().textContent()).resolves.toContain(revoked);
    await expect(page.getByRole('row', { name: /key\.revoke/ }).textContent()).resolves.toContain(OWNER);

    await rows.first().getByRole('button').focus();
    await page.keyboard.press('Enter');
    const detail = page.getByRole('region', { name: /key\.revoke/ });
    await detail.waitFor();
    const text = (await detail.textContent()) ?? '';
    expect(text).toContain('Dashboard action');
    expect(text).toMatch(/Request id\s*req_/);
    // The address the action came from (no proxy in front here: the browser's own).
    expect(text).toContain('Client address127.0.0.1');
    expect(text).toContain(revoked);
    await screenshot(page, 'audit-detail-action');

    // A tool call by the other key opens with its client's name and latency.
    await page.getByLabel('Actor').selectOption({ label: 'agent' });
    await page.getByLabel('Tools and actions').selectOption(['list_calendars']);
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => page.getByRole('row', { name: /list_calendars/ }).count()).toBe(1);
    await page
      .getByRole('row', { name: /list_calendars/ })
      .getByRole('cell')
      .nth(2)
      .click();
    const call = page.getByRole('region', { name: /list_calendars/ });
    await call.waitFor();
    await expect(call.textContent()).resolves.toMatch(
      /Clientclaude-code\/2\.1\.0Client address127\.0\.0\.1Latency\d+ ms/,
    );
  });

  it('finds nothing before the first action, and everything from today on', async () => {
    await page.getByLabel('Actor').selectOption('');
    await page.getByLabel('Tools and actions').selectOption([]);
    const today = await page.evaluate(() => {
      const now = new Date();
      return `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, '0')}-${String(now.getDate()).padStart(2, '0')}`;
    });
    await page.getByLabel('To (inclusive)').fill('2020-01-01');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('Nothing matches.').waitFor();
    await page.getByLabel('To (inclusive)').fill('');
    await page.getByLabel('From').fill(today);
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => page.getByRole('row', { name: /key\.create/ }).count()).toBe(2);
  });

  it('downloads the CSV with the current filters', async () => {
    await page.getByLabel('From').fill('');
    await page.getByLabel('Tools and actions').selectOption(['key.create', 'key.revoke']);
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => page.locator('tbody tr').count()).toBe(3);
    const link = page.getByRole('link', { name: 'Download CSV' });
    await expect(link.getAttribute('href')).resolves.toBe(
      '/api/v1/audit.csv?tool=key.create&tool=key.revoke',
    );
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    expect(download.suggestedFilename()).toMatch(/^calgate-audit-.*\.csv$/);
    const csv = await downloadedText(download);
    const lines = csv.trimEnd().split('\r\n');
    expect(lines[0]).toContain('tool_or_action');
    expect(
      lines
        .slice(1)
        .map((line) => line.split(',')[6])
        .sort(),
    ).toEqual(['key.create', 'key.create', 'key.revoke']);
    expect(csv).not.toContain(agentSecret);
    await screenshot(page, 'audit-filtered');
  });
});
