/**
 * Subscribing to a calendar feed in Chromium: the Accounts page's form takes a name, the feed's
 * address and the keys that may read it; an address that is no calendar is refused on the page
 * with nothing saved; the subscription is listed read-only, its failing refresh (the feed
 * answering 404) is shown with its calendar, and it is disconnected like any account.
 */

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPage, personOf, screenshot, startDashboard } from './browser.ts';
import type { TestGateway } from './harness.ts';
import { type FeedRefresh, startFeedRefresh, until } from './ics-feed-refresh.ts';
import { type FeedServer, startFeedServer, vcalendar } from './ics-feed-server.ts';

describe('subscribing to a calendar feed in the dashboard', () => {
  let feeds: FeedServer;
  let gw: TestGateway;
  let refresh: FeedRefresh;
  let browser: Browser;
  let page: Page;
  let tenantId: string;
  let agent: string;
  let other: string;

  beforeAll(async () => {
    feeds = await startFeedServer();
    feeds.publish('/terms.ics', {
      body: vcalendar(
        ['X-WR-TIMEZONE:Europe/London'],
        [
          [
            'UID:term@school.example',
            'DTSTART;VALUE=DATE:20270111',
            'DTEND;VALUE=DATE:20270327',
            'SUMMARY:Spring term',
          ],
        ],
      ),
      etag: 'terms-1',
    });
    feeds.publish('/about.html', { body: '<!doctype html><p>About us</p>', contentType: 'text/html' });
    ({ gw, browser, page } = await startDashboard({
      env: { OUTBOUND_ALLOW_PRIVATE: 'true', WORKER_IN_PROCESS: 'true', ICS_REFRESH_INTERVAL: '1' },
      viewport: { width: 1280, height: 860 },
    }));
    refresh = await startFeedRefresh(gw);
    ({ tenantId } = await personOf(gw));
    agent = (await gw.runtime.keys.create(tenantId, { name: 'agent' })).key.id;
    other = (await gw.runtime.keys.create(tenantId, { name: 'other' })).key.id;
  });

  afterAll(async () => {
    await browser?.close();
    await refresh?.stop();
    await gw?.stop();
    await feeds?.close();
  });

  const form = () => page.getByRole('region', { name: 'Subscribe to a calendar feed (.ics / webcal)' });

  it('refuses an address that is no calendar, saving nothing', async () => {
    await openPage(page, 'Accounts');
    await form().getByLabel('Calendar name').fill('About');
    await form().getByLabel('Feed address').fill(feeds.url('/about.html'));
    await form().getByRole('button', { name: 'Subscribe' }).click();
    await form().getByRole('alert').filter({ hasText: 'answered, but not with an iCalendar feed' }).waitFor();
    const { rows } = await gw.db.pool.query("SELECT id FROM connections WHERE provider = 'ics'");
    expect(rows).toEqual([]);
  });

  it('subscribes with the keys ticked, lists the calendar read-only and shows a failing refresh', async () => {
    // A fresh page (openPage on the page already shown could fill the form it is about to replace).
    await page.goto(`${gw.url}/accounts`);
    await page.locator('main[data-ready="true"]').waitFor();
    await form().getByLabel('Calendar name').fill('School terms');
    await form().getByLabel('Feed address').fill(feeds.url('/terms.ics').replace('http:', 'webcal:'));
    await form().getByLabel('other').uncheck();
    await screenshot(page, '70-ics-subscribe-form');
    await form().getByRole('button', { name: 'Subscribe' }).click();
    await page.getByText('Subscribed to School terms: 1 event(s) in the feed now.').waitFor();
    const account = page.locator('li[data-account="School terms"]');
    await account.getByText('read-only').waitFor();
    await account.getByText('Calendar feed').waitFor();
    await account
      .getByRole('list', { name: 'Calendars of School terms' })
      .getByText('School terms')
      .waitFor();
    const { rows: grants } = await gw.db.pool.query<{
      key_id: string;
      can_read: boolean;
      can_write: boolean;
    }>(
      `SELECT g.key_id, g.can_read, g.can_write FROM grants g JOIN calendars c ON c.id = g.calendar_id
       JOIN connections n ON n.id = c.connection_id WHERE n.provider = 'ics'`,
    );
    expect(grants).toEqual([{ key_id: agent, can_read: true, can_write: false }]);
    expect(grants.some((grant) => grant.key_id === other)).toBe(false);

    // The feed disappears; the next refresh fails, and the page says so with the calendar.
    const { rows } = await gw.db.pool.query<{ id: string }>(
      "SELECT c.id FROM calendars c JOIN connections n ON n.id = c.connection_id WHERE n.provider = 'ics'",
    );
    const calendarId = String(rows[0]?.id);
    const plan = () => refresh.plan();
    await plan();
    await until('the first sync', async () => {
      const state = await gw.db.pool.query<{ synced_at: Date | null }>(
        'SELECT synced_at FROM mirror_sync_state WHERE calendar_id = $1',
        [calendarId],
      );
      return state.rows[0]?.synced_at;
    });
    feeds.update('/terms.ics', { status: 404 });
    await until('the feed to be due', () => refresh.due(calendarId));
    await plan();
    await until('the failure', async () => {
      const state = await gw.db.pool.query<{ status: string }>(
        'SELECT status FROM mirror_sync_state WHERE calendar_id = $1',
        [calendarId],
      );
      return state.rows[0]?.status === 'error';
    });
    await page.reload();
    await page.locator('main[data-ready="true"]').waitFor();
    await account
      .getByText(`Last refresh failed: The feed at ${feeds.origin} answered 404: no calendar there.`)
      .waitFor();
    await screenshot(page, '71-ics-refresh-failed');
  }, 90_000);

  it('disconnects the subscription like any account', async () => {
    await page.getByRole('button', { name: 'Disconnect School terms' }).click();
    const dialog = page.getByRole('dialog', { name: 'Disconnect School terms?' });
    await dialog.getByRole('button', { name: 'Disconnect' }).click();
    await page.getByText('Disconnected School terms.').waitFor();
    const { rows } = await gw.db.pool.query("SELECT id FROM connections WHERE provider = 'ics'");
    expect(rows).toEqual([]);
  });
});
