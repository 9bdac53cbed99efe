/**
 * list_events on a Google calendar (the Google emulator, read directly, not from the mirror): a
 * page of Google's is cut to 25,000 o200k tokens, and the tokens carry on inside it and then on
 * to Google's next page, so every event comes once, in order.
 */
import type { Client } from '@modelcontextprotocol/client';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectGoogleAccount, startTestEmulator, type TestEmulator } from './google-fixture.ts';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway, textOf } from './harness.ts';

const CLIENT = { clientId: 'calgate-test.apps.googleusercontent.com', clientSecret: 'test-client-secret' };
const ANN = 'ann@example.com';
const LIMIT = 25_000;
const tokens = (text: string) => encode(text, { disallowedSpecial: new Set<string>() }).length;

const WORDS =
  'budget review roadmap hiring vendor contract launch metrics offsite planning design sprint retro customer escalation migration security audit invoice travel workshop agenda minutes deadline risk forecast pipeline onboarding feedback'.split(
    ' ',
  );
const prose = (seed: number) =>
  Array.from(
    { length: 420 },
    (_, i) => `${WORDS[(seed * 31 + i * 7) % WORDS.length]}${(seed + i) % 11 === 0 ? ` #${seed * i}` : ''}`,
  ).join(' ');

const EVENTS = Array.from({ length: 120 }, (_, index) => {
  const start = new Date(Date.UTC(2026, 2, 2 + index, 9, 0));
  return {
    id: `ann${String(index).padStart(4, '0')}`,
    summary: `Notes ${index}`,
    description: prose(index),
    start: { dateTime: start.toISOString() },
    end: { dateTime: new Date(start.getTime() + 3_600_000).toISOString() },
  };
});

describe('list_events on Google stays within 25,000 tokens', () => {
  let emulator: TestEmulator;
  let gw: TestGateway;
  let client: Client;

  beforeAll(async () => {
    emulator = await startTestEmulator(CLIENT, {
      accounts: [{ email: ANN, timeZone: 'UTC', events: EVENTS }],
    });
    gw = await startTestGateway({ ...emulator.env, ...HIGH_RATE_LIMITS, MIRROR_READS: 'false' });
    const tenant = await gw.seedTenant('Acme');
    await connectGoogleAccount(gw, emulator, tenant, ANN, 'read');
    client = await connectClient(gw.mcpUrl, tenant.secret);
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await gw?.stop();
    await emulator?.close();
  });

  it("follows the tokens through Google's pages: every event once, in order", async () => {
    const args = { timeMin: '2026-03-01T00:00:00Z', timeMax: '2026-08-01T00:00:00Z', maxResults: 70 };
    const ids: string[] = [];
    let pages = 0;
    let pageToken: string | undefined;
    do {
      const result = await client.callTool({
        name: 'list_events',
        arguments: pageToken === undefined ? args : { ...args, pageToken },
      });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(tokens(textOf(result))).toBeLessThanOrEqual(LIMIT);
      expect(tokens(JSON.stringify(result.structuredContent))).toBeLessThanOrEqual(LIMIT);
      const out = result.structuredContent as { events: { id: string }[]; nextPageToken?: string };
      ids.push(...out.events.map((event) => event.id));
      pageToken = out.nextPageToken;
      pages += 1;
    } while (pageToken !== undefined && pages < 50);
    // Two of Google's pages (70 and 50 events), each cut at least once.
    expect(pages).toBeGreaterThan(3);
    expect(ids).toEqual(EVENTS.map((event) => event.id));
  });
});
