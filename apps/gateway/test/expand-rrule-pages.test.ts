/**
 * expand_rrule pages its answers over MCP: every page's text and structured content stay under
 * 25,000 o200k tokens, the pages hold every instance exactly once, in order, in either format, a
 * token from another rule or made up is refused, and clients of each protocol revision get the
 * bytes their revision needs (2025-11-25: the JSON text beside structuredContent; 2026-07-28:
 * structuredContent alone when the text would only repeat it).
 */
import type { Client } from '@modelcontextprotocol/client';
import type { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { decode } from '@toon-format/toon';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectClient,
  connectClient2026,
  connectClientV1,
  startTestGateway,
  type TestGateway,
  textOf,
} from './harness.ts';

const TOKEN_CAP = 25_000;

interface Page {
  timeZone: string;
  instances: { start: string; end: string }[];
  truncated: boolean;
  nextPageToken?: string;
  warnings?: string[];
}

type AnyClient = Pick<Client, 'callTool'> | Pick<ClientV1, 'callTool'>;

describe('expand_rrule pages over MCP', () => {
  let gw: TestGateway;
  let client: Client;
  let v1: ClientV1;
  let modern: Client;

  beforeAll(async () => {
    gw = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '100000', RATE_LIMIT_BURST: '10000' });
    const owner = await gw.seedTenant('Pages');
    client = await connectClient(gw.mcpUrl, owner.secret);
    v1 = await connectClientV1(gw.mcpUrl, owner.secret);
    modern = await connectClient2026(gw.mcpUrl, owner.secret);
  });

  afterAll(async () => {
    await client?.close();
    await v1?.close();
    await modern?.close();
    await gw?.stop();
  });

  async function call(by: AnyClient, args: Record<string, unknown>) {
    const result = await by.callTool({ name: 'expand_rrule', arguments: args });
    return { result, text: textOf(result), page: result.structuredContent as Page };
  }

  /** Every page of an expansion, each checked against the token cap and against its own text. */
  async function allPages(args: Record<string, unknown>, format: 'json' | 'toon') {
    const pages: Page[] = [];
    let pageToken: string | undefined;
    do {
      const { result, text, page } = await call(client, {
        ...args,
        format,
        ...(pageToken === undefined ? {} : { pageToken }),
      });
      expect(result.isError, text).toBeFalsy();
      expect(encode(text).length).toBeLessThanOrEqual(TOKEN_CAP);
      expect(encode(JSON.stringify(page)).length).toBeLessThanOrEqual(TOKEN_CAP);
      // Within as many bytes, too: the gateway's answer limit then passes it without counting.
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(TOKEN_CAP);
      expect(Buffer.byteLength(JSON.stringify(page))).toBeLessThanOrEqual(TOKEN_CAP);
      expect(format === 'toon' ? decode(text) : JSON.parse(text)).toEqual(page);
      pages.push(page);
      pageToken = page.nextPageToken;
    } while (pageToken !== undefined);
    return pages;
  }

  it('answers 10,000 instances in pages under the token cap, each instance once, in either format', async () => {
    const rule = { rrule: 'FREQ=DAILY', dtstart: '2026-01-05T09:30:00', timeZone: 'America/New_York' };
    for (const format of ['json', 'toon'] as const) {
      const pages = await allPages({ ...rule, count: 10_000 }, format);
      expect(pages.length).toBeGreaterThan(1);
      const instances = pages.flatMap((page) => page.instances);
      expect(instances).toHaveLength(10_000);
      expect(new Set(instances.map((instance) => instance.start)).size).toBe(10_000);
      expect(instances[0]).toEqual({ start: '2026-01-05T09:30:00-05:00', end: '2026-01-05T10:30:00-05:00' });
      // Across the DST change, day after day, and the 10,000th day.
      expect(instances[63]).toEqual({ start: '2026-03-09T09:30:00-04:00', end: '2026-03-09T10:30:00-04:00' });
      expect(instances[9_999]).toEqual({
        start: '2053-05-22T09:30:00-04:00',
        end: '2053-05-22T10:30:00-04:00',
      });
      // Only the last page says whether the rule goes on past count (a daily rule does).
      expect(pages.slice(0, -1).every((page) => !page.truncated)).toBe(true);
      expect(pages.at(-1)?.truncated).toBe(true);
    }
  });

  it('pages a COUNT rule with exdates and a dtstart off the rule exactly as one expansion', async () => {
    const rule = {
      rrule: 'FREQ=WEEKLY;BYDAY=MO,WE,FR;COUNT=2000',
      dtstart: '2026-01-06T08:00:00',
      timeZone: 'Asia/Kathmandu',
      durationMinutes: 45,
      exdates: ['2026-01-07T08:00:00', '2030-06-03T08:00:00'],
    };
    const pages = await allPages({ ...rule, count: 5_000 }, 'json');
    const instances = pages.flatMap((page) => page.instances);
    // COUNT counts dtstart (a Tuesday, off the rule) and the excluded dates: 2,000 less two.
    expect(instances).toHaveLength(1_998);
    expect(pages.at(-1)?.truncated).toBe(false);
    expect(pages.at(-1)?.nextPageToken).toBeUndefined();
    // The warning about dtstart comes once, with the first page.
    expect(pages[0]?.warnings?.[0]).toMatch(/does not match the rule/);
    expect(pages.slice(1).every((page) => page.warnings === undefined)).toBe(true);
    const firstTwenty = await call(client, { ...rule, count: 20 });
    expect(instances.slice(0, 20)).toEqual(firstTwenty.page.instances);
    expect(instances.map((instance) => instance.start)).not.toContain('2030-06-03T08:00:00+05:45');
    const starts = instances.map((instance) => Date.parse(instance.start));
    expect(starts.every((start, i) => i === 0 || start > (starts[i - 1] as number))).toBe(true);
  });

  it('refuses a made-up token, and a token given with another rule, with one sentence; nothing is expanded', async () => {
    const rule = { rrule: 'FREQ=DAILY', dtstart: '2026-01-05T09:30:00', timeZone: 'UTC', count: 2_000 };
    const first = await call(client, rule);
    const token = first.page.nextPageToken as string;
    expect(token).toEqual(expect.any(String));
    const message =
      'pageToken is not one an earlier page of this expansion gave: pass the nextPageToken of the last answer with the same rrule, dtstart, timeZone, durationMinutes, count and exdates, or leave pageToken out to start from the first instance.';
    for (const bad of [
      { ...rule, pageToken: 'garbage' },
      { ...rule, pageToken: `${token.slice(0, -1)}x` },
      { ...rule, rrule: 'FREQ=WEEKLY', pageToken: token },
      { ...rule, timeZone: 'Europe/Berlin', pageToken: token },
      { ...rule, count: 1_000, pageToken: token.replace(/\.344\./, '.5000.') },
    ]) {
      const refused = await call(client, bad);
      expect(refused.result.isError, JSON.stringify(bad)).toBe(true);
      expect(refused.text).toBe(message);
    }
    const second = await call(client, { ...rule, pageToken: token });
    expect(second.result.isError).toBeFalsy();
    expect(second.page.instances[0]?.start).toBe('2026-12-15T09:30:00Z');
  });

  it('sends MCP 2025-11-25 clients the JSON text beside structuredContent, and 2026-07-28 clients structuredContent alone', async () => {
    const args = { rrule: 'FREQ=DAILY', dtstart: '2026-01-05T09:30:00', timeZone: 'UTC', count: 50 };
    const legacy = await call(v1, args);
    expect(legacy.result.content).toEqual([{ type: 'text', text: JSON.stringify(legacy.page) }]);
    expect(legacy.page.instances).toHaveLength(50);

    const current = await call(modern, args);
    expect(current.result.isError).toBeFalsy();
    expect(current.result.content).toEqual([]);
    expect(current.page).toEqual(legacy.page);
    // TOON is text the client asked for: every revision gets it beside the structured content.
    const toon = await call(modern, { ...args, format: 'toon' });
    expect(decode(toon.text)).toEqual(toon.page);
    expect(toon.page).toEqual(legacy.page);
  });
});
