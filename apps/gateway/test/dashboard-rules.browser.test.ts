import { LocalCalendarProvider } from '@calgate/providers';
import { LocalEventStore } from '@calgate/store';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { downloadedText, openPage, personOf, screenshot, startDashboard } from './browser.ts';
import type { TestGateway } from './harness.ts';

const DAY_MS = 86_400_000;

/** Monday of last ISO week (UTC dates): always inside the editor's last-30-days preview. */
function lastWeek(): { monday: Date; week: string; dates: string[] } {
  const today = new Date(Date.now() - (Date.now() % DAY_MS));
  const monday = new Date(today.getTime() - (((today.getUTCDay() + 6) % 7) + 7) * DAY_MS);
  const thursday = new Date(monday.getTime() + 3 * DAY_MS);
  const year = thursday.getUTCFullYear();
  const number = Math.ceil(((thursday.getTime() - Date.UTC(year, 0, 1)) / DAY_MS + 1) / 7);
  const dates = [0, 1, 2].map((day) => new Date(monday.getTime() + day * DAY_MS).toISOString().slice(0, 10));
  return { monday, week: `${year}-W${String(number).padStart(2, '0')}`, dates };
}

describe('the dashboard in Chromium: projects, a live-previewed rule, conflicts, the timesheet and its CSV', () => {
  let gw: TestGateway;
  let browser: Browser;
  let page: Page;
  const { week, dates } = lastWeek();
  const at = (day: number, time: string) => ({ dateTime: `${dates[day]}T${time}:00Z`, timeZone: 'UTC' });

  async function matchCount(text: string): Promise<void> {
    await page.locator('#rule-preview').getByText(text).waitFor();
  }

  beforeAll(async () => {
    // The person lives in Berlin: the workspace's zone, which the timesheet splits days in.
    ({ gw, browser, page } = await startDashboard({
      timeZone: 'Europe/Berlin',
      context: { acceptDownloads: true },
    }));
    const { tenantId } = await personOf(gw);
    const work = await gw.localCalendar(tenantId, 'Work', 'Europe/Berlin');
    const provider = new LocalCalendarProvider(new LocalEventStore(gw.db));
    const ref = { id: work, externalId: work, timeZone: 'Europe/Berlin' };
    await provider.insertEvent(ref, {
      summary: 'Acme sync',
      start: at(0, '09:00'),
      end: at(0, '10:00'),
      attendees: [{ email: 'bob@acme.com' }],
    });
    await provider.insertEvent(ref, { summary: 'Acme review', start: at(1, '13:00'), end: at(1, '14:30') });
    await provider.insertEvent(ref, { summary: 'Standup', start: at(2, '08:00'), end: at(2, '08:30') });
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
  });

  it('creates projects from the Projects & rules page in the main navigation', async () => {
    await openPage(page, 'Projects & rules');
    await page.getByLabel('Project name').fill('Acme');
    await page.getByLabel('Client (optional)').fill('Acme Corp');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.getByText('Project Acme created.').waitFor();
    await page.getByLabel('Project name').fill('Internal');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.getByText('Project Internal created.').waitFor();
    const projects = page.getByRole('table', { name: 'Projects' });
    await expect(projects.getByRole('rowheader').allTextContents()).resolves.toEqual([' Acme', ' Internal']);
    // Left unchosen, each project gets a colour no other live project has.
    await expect(projects.locator('td code').allTextContents()).resolves.toEqual(['#4f46e5', '#059669']);
    await expect(
      projects
        .locator('.swatch')
        .first()
        .evaluate((dot) => (dot as unknown as { style: { backgroundColor: string } }).style.backgroundColor),
    ).resolves.toBe('rgb(79, 70, 229)');
  });

  it('previews a rule as it is typed, shows a malformed query’s position, and saves it', async () => {
    const query = page.getByLabel('Query');
    const previews: string[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/api/v1/rules/preview')) {
        previews.push(request.postData() ?? '');
      }
    });
    await query.pressSequentially('title:acme', { delay: 40 });
    await matchCount('2 matches in the last 30 days.');
    // Debounced: ten keystrokes, one preview (two at most on a slow machine).
    expect(previews.length).toBeLessThanOrEqual(2);
    expect(JSON.parse(previews.at(-1) ?? '{}')).toMatchObject({ query: 'title:acme' });
    await expect(
      page.getByRole('list', { name: 'First matches' }).getByRole('listitem').count(),
    ).resolves.toBe(2);
    await query.fill('title:acme OR title:standup');
    await matchCount('3 matches in the last 30 days.');
    await query.fill('title:acme AND title:nothing-like-this');
    await matchCount('0 matches in the last 30 days.');
    await expect(page.locator('#rule-preview [data-warning="no_matches"]').textContent()).resolves.toContain(
      'files nothing there',
    );
    await query.fill('title:acme)');
    const alert = page.locator('#rule-query-error').getByRole('alert');
    await alert.waitFor();
    await expect(alert.textContent()).resolves.toContain('position 10');
    await expect(query.getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(page.locator('#rule-query-error mark').textContent()).resolves.toBe(')');
    await screenshot(page, '40-rules-query-error');

    await query.fill('title:acme');
    await matchCount('2 matches in the last 30 days.');
    await expect(page.locator('#rule-query-error').textContent()).resolves.toBe('');
    await page.getByLabel('Project', { exact: true }).selectOption({ label: 'Acme' });
    await page.getByRole('button', { name: 'Save rule' }).click();
    await page.getByText('Rule title:acme saved for Acme.').waitFor();
    const rules = page.getByRole('table', { name: 'Rules' });
    await expect(rules.getByRole('row').nth(1).textContent()).resolves.toContain('Acme');
  });

  it('applies rules to the chosen week and shows the hours per project and day', async () => {
    await page.getByLabel('Week').fill(week);
    await page.getByRole('table', { name: `Hours in week ${week} (Europe/Berlin)` }).waitFor();
    await page.getByRole('button', { name: 'Apply rules to this week' }).click();
    await page
      .getByText(`Rules applied to ${week}: 3 events, 2 filed (0 to review), 1 pending, 3 changed.`)
      .waitFor();
    const table = page.getByRole('table', { name: `Hours in week ${week} (Europe/Berlin)` });
    const acme = table.getByRole('row', { name: /Acme/ });
    await expect(acme.getByRole('cell').allTextContents()).resolves.toEqual([
      '1.00',
      '1.50',
      '–',
      '–',
      '–',
      '–',
      '–',
      '2.50',
    ]);
    const unclassified = table.getByRole('row', { name: /Unclassified/ });
    await expect(unclassified.getByRole('cell').last().textContent()).resolves.toBe('0.50');
    await expect(table.locator('tfoot td').last().textContent()).resolves.toBe('3.00');
    await screenshot(page, '41-rules-timesheet');
  });

  it('the timesheet’s zone picker starts at the workspace zone; another zone redraws the week in it', async () => {
    const zone = page.getByRole('combobox', { name: 'Time zone', exact: true });
    await expect(zone.inputValue()).resolves.toBe('Europe/Berlin');
    await zone.fill('UTC');
    await zone.press('Enter');
    await page.getByRole('table', { name: `Hours in week ${week} (UTC)` }).waitFor();
    await expect(page.getByRole('link', { name: 'Download CSV' }).getAttribute('href')).resolves.toBe(
      `/api/v1/timesheet.csv?week=${week}&timeZone=UTC`,
    );
    await zone.fill('berlin');
    await zone.press('Enter');
    await page.getByRole('table', { name: `Hours in week ${week} (Europe/Berlin)` }).waitFor();
  });

  it('asks before saving a rule that would refile events, then saves it; the toggle disables it', async () => {
    await page.getByLabel('Query').fill('title:sync');
    await page.getByLabel('Project', { exact: true }).selectOption({ label: 'Internal' });
    await page.getByLabel('Weight').fill('3');
    await matchCount('1 match in the last 30 days, 1 already filed elsewhere.');
    await page.getByRole('button', { name: 'Save rule' }).click();
    const dialog = page.getByRole('alertdialog', { name: '1 matching events are already filed elsewhere' });
    await dialog.waitFor();
    await expect(dialog.getByRole('listitem').textContent()).resolves.toBe(
      'Acme sync: Acme (by a rule) → Internal after applying rules',
    );
    await screenshot(page, '42-rules-conflicts');
    await dialog.getByRole('button', { name: 'Save anyway' }).click();
    await page.getByText('Rule title:sync saved for Internal.').waitFor();
    const toggle = page.getByLabel('Enabled: title:sync');
    await expect(toggle.isChecked()).resolves.toBe(true);
    await toggle.uncheck();
    await page.getByText('Rule title:sync disabled.').waitFor();
    await expect(page.getByLabel('Enabled: title:sync').isChecked()).resolves.toBe(false);
    await page.getByRole('button', { name: 'Delete rule title:sync' }).click();
    await page.getByText('Rule title:sync deleted.').waitFor();
    await expect(page.getByRole('table', { name: 'Rules' }).getByRole('row').count()).resolves.toBe(2);
  });

  it('downloads the week as CSV', async () => {
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`calgate-timesheet-${week}.csv`);
    const csv = await downloadedText(download);
    expect(csv).toBe(
      [
        'period,project,client,hours',
        `${dates[0]},Acme,Acme Corp,1.00`,
        `${dates[1]},Acme,Acme Corp,1.50`,
        `${dates[2]},Unclassified,,0.50`,
        '',
      ].join('\r\n'),
    );
    await screenshot(page, '43-rules-page');
  });
});
