/**
 * The push-notification test fixture: an emulator with fast retries, a loopback receiver,
 * clients for Ann and Bob, and a `watch` helper. Each test starts from a reset emulator.
 */
import type { calendar_v3 } from '@googleapis/calendar';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { type GoogleEmulator, startGoogleEmulator } from '../src/index.ts';
import { ANN, BOB, baseSeed, calendarFor } from './helpers.ts';
import { type Receiver, startReceiver } from './receiver.ts';

export interface WatchFixture {
  emulator: GoogleEmulator;
  receiver: Receiver;
  ann: calendar_v3.Calendar;
  bob: calendar_v3.Calendar;
  /** Opens a channel with a fresh id and token (the token is what Calgate checks on receipt). */
  watch(
    client: calendar_v3.Calendar,
    calendarId: string,
    extra?: Partial<calendar_v3.Schema$Channel>,
  ): Promise<calendar_v3.Schema$Channel>;
  /** Waits until every queued notification has been delivered, dropped or given up. */
  settle(): Promise<void>;
}

export const meeting = (summary: string) => ({
  summary,
  start: { dateTime: '2026-03-02T09:00:00Z' },
  end: { dateTime: '2026-03-02T10:00:00Z' },
});

export function useWatchFixture(): WatchFixture {
  let n = 0;
  const f = {} as WatchFixture;
  f.watch = async (client, calendarId, extra = {}) => {
    n += 1;
    const requestBody = {
      id: `chan-${n}`,
      type: 'web_hook',
      address: f.receiver.url,
      token: `tok-${n}`,
      ...extra,
    };
    return (await client.events.watch({ calendarId, requestBody })).data;
  };
  f.settle = () => f.emulator.admin.notificationsIdle();
  beforeAll(async () => {
    f.emulator = await startGoogleEmulator({
      seed: baseSeed(),
      notificationRetry: { retries: 3, baseDelayMs: 10 },
    });
    f.receiver = await startReceiver();
  });
  beforeEach(() => {
    f.emulator.admin.reset();
    f.receiver.received.length = 0;
    f.ann = calendarFor(f.emulator, ANN);
    f.bob = calendarFor(f.emulator, BOB);
  });
  afterEach(() => f.emulator.admin.clearFaults());
  afterAll(async () => {
    await f.emulator.close();
    await f.receiver.close();
  });
  return f;
}
