import { createSchedule, type ScheduleRequest } from '@calgate/scheduler';
import type { ScheduleRecord } from '@calgate/store';
import { type Receiver, startReceiver, until } from '@calgate/testkit';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPage, personOf, screenshot, startDashboard } from './browser.ts';
import type { TestGateway } from './harness.ts';

describe('the dashboard in Chromium: delivery targets, schedules with their deliveries, the delivery log', () => {
  let gw: TestGateway;
  let browser: Browser;
  let page: Page;
  let receiver: Receiver;
  let secret = '';
  let tenantId = '';
  let keyId = '';
  let targetId = '';
  let once: ScheduleRecord;
  let daily: ScheduleRecord;

  const card = (schedule: ScheduleRecord): Locator =>
    page.locator(`article[data-schedule-id="${schedule.id}"]`);
  const sentFor = (schedule: ScheduleRecord) =>
    receiver.received.filter((r) => (r.body as { scheduleId?: string }).scheduleId === schedule.id);

  async function schedule(request: ScheduleRequest, prompt: string): Promise<ScheduleRecord> {
    const made = createSchedule(request, Date.now());
    if (!made.ok) {
      throw made.error;
    }
    return gw.runtime.deps.dashboard.scheduling.create(tenantId, {
      keyId,
      targetId,
      prompt,
      spec: made.value.schedule.spec as unknown as ScheduleRecord['spec'],
      nextRunAt: new Date(made.value.firstRun),
    });
  }

  beforeAll(async () => {
    // The receiver is on loopback; the in-process worker delivers for real.
    receiver = await startReceiver(() => secret);
    ({ gw, browser, page } = await startDashboard({
      env: { TARGETS_ALLOW_PRIVATE: 'true', WORKER_IN_PROCESS: 'true' },
      context: { locale: 'en-US', timezoneId: 'America/New_York' },
    }));
    page.setDefaultTimeout(15_000);
    ({ tenantId } = await personOf(gw));
    keyId = (await gw.runtime.keys.create(tenantId, { name: 'assistant' })).key.id;
  });

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await gw?.stop();
  });

  it('creates a webhook target, shows its secret once, and lists only its origin', async () => {
    await openPage(page, 'Delivery targets');
    await page.getByText('No delivery targets yet').waitFor();
    await page.getByLabel('Webhook name').fill('Receiver');
    await page.getByLabel('Webhook URL').fill(receiver.url);
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await page.getByText('Webhook Receiver created.').waitFor();

    const panel = page.getByRole('status', { name: 'Signing secret for Receiver' });
    await expect(panel.getByText('Calgate shows it only this once').count()).resolves.toBe(1);
    await expect(panel.getByRole('button', { name: 'Copy the signing secret' }).count()).resolves.toBe(1);
    secret = (await panel.locator('#target-secret').textContent()) ?? '';
    expect(secret).toMatch(/^whsec_/);

    const table = page.getByRole('table', { name: 'Delivery targets' });
    const row = table.getByRole('row', { name: /Receiver/ });
    await expect(row.getByRole('cell').allTextContents()).resolves.toEqual([
      'Webhook',
      new URL(receiver.url).origin,
      '—',
      '0',
      'active',
      expect.stringContaining('Send test'),
    ]);
    await screenshot(page, '60-targets-secret');
    targetId =
      (
        await gw.db.pool.query<{ id: string }>('SELECT id FROM delivery_targets WHERE tenant_id = $1', [
          tenantId,
        ])
      ).rows[0]?.id ?? '';

    // Seen once: after leaving the page and coming back, neither the secret nor the URL's path shows.
    await openPage(page, 'Schedules');
    await openPage(page, 'Delivery targets');
    const text = (await page.locator('main').textContent()) ?? '';
    expect(text).not.toContain(secret);
    expect(text).not.toContain('whsec_');
    expect(text).not.toContain('/hook');
  });

  it('sends a signed test to the receiver and shows how it went', async () => {
    await page.getByRole('button', { name: 'Send a test to Receiver' }).click();
    await page.getByText(/^Test of Receiver succeeded: HTTP 200 in \d+ ms\.$/).waitFor();
    await until(() => receiver.received.length === 1);
    expect(receiver.received[0]).toMatchObject({ verified: true, body: { type: 'target.test', targetId } });

    receiver.answer = 503;
    await page.getByRole('button', { name: 'Send a test to Receiver' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'Test of Receiver failed (HTTP 503' });
    await alert.waitFor();
    receiver.answer = 200;
  });

  it('shows schedules made by an agent with their deliveries, replays one, and cancels another', async () => {
    once = await schedule(
      { kind: 'once', at: new Date(Date.now() + 1500).toISOString() },
      'Prepare the standup notes.',
    );
    daily = await schedule(
      { kind: 'cron', cron: '0 9 * * *', timeZone: 'Europe/Berlin' },
      `Summarise yesterday's meetings and list open follow-ups. ${'Be brief. '.repeat(30)}`,
    );
    await until(() => sentFor(once).length === 1, 30_000);
    const [first] = sentFor(once);
    expect(first?.verified).toBe(true);
    await until(
      async () =>
        (await gw.runtime.scheduler.deliveries.listBySchedule(tenantId, once.id))[0]?.status === 'delivered',
    );

    await openPage(page, 'Schedules');
    const onceCard = card(once);
    await expect(onceCard.getByRole('heading').textContent()).resolves.toMatch(/^once at /);
    await expect(onceCard.textContent()).resolves.toContain('Prepare the standup notes.');
    await expect(onceCard.textContent()).resolves.toContain(`assistant (${keyId})`);
    await expect(onceCard.textContent()).resolves.toContain('Receiver');
    await expect(onceCard.locator('.badge').first().textContent()).resolves.toBe('finished');
    const deliveries = onceCard.getByRole('table', { name: `Recent deliveries of ${once.id}` });
    const occurrence = `${once.id}:${once.nextRunAt?.toISOString().replace('.000Z', 'Z')}`;
    const row = deliveries.getByRole('row', { name: new RegExp(occurrence) });
    await expect(row.getByRole('cell').nth(2).textContent()).resolves.toBe('delivered');
    await expect(row.getByRole('cell').nth(3).textContent()).resolves.toBe('200');
    expect(first?.id).toBe(occurrence);

    // The long prompt is cut, the next run is in the viewer's zone (New York) and names it.
    const dailyCard = card(daily);
    await expect(dailyCard.locator('summary').first().textContent()).resolves.toMatch(/…$/);
    await expect(dailyCard.locator('dd time').first().textContent()).resolves.toMatch(/\b(EST|EDT)$/);
    await expect(dailyCard.locator('dd time').first().textContent()).resolves.toMatch(/\b(3|4):00:00\sAM\b/);
    await screenshot(page, '61-schedules');

    await row.getByRole('button', { name: `Replay ${occurrence}` }).click();
    await page.getByText(`Replay of ${occurrence} queued`).waitFor();
    await until(() => sentFor(once).length === 2, 30_000);
    expect(sentFor(once).map((r) => r.id)).toEqual([occurrence, occurrence]);

    // The target cannot go while the daily prompt still delivers to it.
    await openPage(page, 'Delivery targets');
    await page.getByRole('button', { name: 'Delete Receiver' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: "Delivery target 'Receiver' cannot be deleted while a schedule delivers to it" })
      .waitFor();

    await openPage(page, 'Schedules');
    await card(daily).getByRole('button', { name: 'Pause' }).click();
    await page.getByText(`Scheduled prompt ${daily.id} paused.`).waitFor();
    await expect(card(daily).locator('.badge').first().textContent()).resolves.toBe('paused');
    await card(daily).getByRole('button', { name: 'Resume' }).click();
    await page.getByText(`Scheduled prompt ${daily.id} resumed.`).waitFor();
    await card(daily).getByRole('button', { name: 'Cancel' }).click();
    await page.getByText(`Scheduled prompt ${daily.id} cancelled.`).waitFor();
    await expect(card(daily).count()).resolves.toBe(0);
    await page.getByLabel('Show cancelled prompts').check();
    await expect(card(daily).locator('.badge').first().textContent()).resolves.toBe('cancelled');
    await expect(card(daily).getByRole('button', { name: 'Cancel' }).count()).resolves.toBe(0);
    expect((await gw.runtime.scheduler.schedules.get(tenantId, daily.id))?.status).toBe('cancelled');
  }, 120_000);

  it('shows why a prompt around events has no next run, instead of a date', async () => {
    const standup = await gw.runtime.deps.dashboard.scheduling.create(tenantId, {
      keyId,
      targetId,
      prompt: 'Brief me before the standup.',
      spec: { kind: 'around_events', query: 'title:Standup', offsetMinutes: -10 },
      nextRunAt: null,
    });
    await openPage(page, 'Schedules');
    const facts = card(standup).locator('dl.facts');
    await expect(facts.locator('dt').nth(1).textContent()).resolves.toBe('Next run');
    await expect(facts.locator('dd').nth(1).textContent()).resolves.toBe(
      'no event matching "title:Standup" in the next 48 h; checked every minute',
    );
    await expect(facts.locator('dd').nth(1).locator('time').count()).resolves.toBe(0);
    await screenshot(page, '63-schedule-without-next-run');
    await gw.runtime.deps.dashboard.scheduling.cancel(tenantId, standup.id);
  });

  it('lists every delivery in the log, newest first, filtered by status', async () => {
    await openPage(page, 'Delivery log');
    const log = page.getByRole('table', { name: 'Deliveries, newest first' });
    const occurrence = `${once.id}:${once.nextRunAt?.toISOString().replace('.000Z', 'Z')}`;
    const row = log.getByRole('row', { name: new RegExp(occurrence) });
    await row.waitFor();
    const cells = await row.getByRole('cell').allTextContents();
    expect(cells[0]).toMatch(/^once at /);
    expect(cells.slice(3, 6)).toEqual(['delivered', '200', '—']);
    await screenshot(page, '62-delivery-log');

    await page.getByLabel('Status').selectOption('failed');
    await page.getByRole('button', { name: 'Filter' }).click();
    await log.getByText('No deliveries match.').waitFor();
    await page.getByLabel('Status').selectOption('delivered');
    await page.getByRole('button', { name: 'Filter' }).click();
    await row.waitFor();
  });
});
