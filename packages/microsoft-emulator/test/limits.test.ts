import { describe, expect, it } from 'vitest';
import { ALICE, start } from './helpers.ts';

describe('throttling', () => {
  it('allows 4 requests in flight per mailbox; a fifth gets 429 ApplicationThrottled with Retry-After', async () => {
    const { graph, emulator } = await start();
    emulator.admin.setLatency({ ms: 300, match: { op: 'calendars.list' } });
    const held = Array.from({ length: 4 }, () => graph('/me/calendars'));
    await new Promise((r) => setTimeout(r, 100));
    const fifth = await graph('/me/calendars');
    expect(fifth.status).toBe(429);
    expect(fifth.body.error.code).toBe('ApplicationThrottled');
    expect(fifth.body.error.message).toMatch(/MailboxConcurrency/);
    expect(Number(fifth.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await Promise.all(held)).map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect((await graph('/me/calendars')).status).toBe(200);
  });

  it('spends a per-mailbox budget per window, and another mailbox is not affected', async () => {
    const { graph, emulator } = await start();
    emulator.admin.setThrottle({ budget: 3, windowMs: 60_000 });
    for (let i = 0; i < 3; i += 1) {
      expect((await graph('/me')).status).toBe(200);
    }
    const over = await graph('/me');
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(50);
    const bob = emulator.admin.issueTokens({ email: 'bob@contoso.example' }).access_token;
    expect((await graph('/me', { token: bob })).status).toBe(200);
    emulator.admin.advanceClock(61_000);
    expect((await graph('/me')).status).toBe(200);
  });
});

describe('fault scripts', () => {
  it('answers scripted 429 and 503 with Retry-After and Graph error bodies, then recovers', async () => {
    const { graph, emulator } = await start();
    emulator.admin.fail(
      { op: 'calendars.list', mailbox: ALICE },
      { kind: 'error', status: 503, retryAfterSeconds: 2 },
    );
    emulator.admin.fail({ op: 'calendars.*' }, { kind: 'error', status: 429, retryAfterSeconds: 1 });
    const a = await graph('/me/calendars');
    expect(a.status).toBe(503);
    expect(a.headers.get('retry-after')).toBe('2');
    expect(a.body.error.code).toBe('ServiceNotAvailable');
    const b = await graph('/me/calendars');
    expect(b.status).toBe(429);
    expect(b.body.error.code).toBe('ApplicationThrottled');
    expect((await graph('/me/calendars')).status).toBe(200);
    expect(emulator.admin.requests({ op: 'calendars.list' }).map((r) => [r.status, r.fault])).toEqual([
      [503, 'error'],
      [429, 'error'],
      [200, undefined],
    ]);
  });

  it('scripts 500s, 401 token expiry, latency and dropped connections; the HTTP admin API scripts them too', async () => {
    const { graph, emulator } = await start();
    emulator.admin.script({ match: { op: 'me.get' }, action: { kind: 'error', status: 401 } });
    const expired = await graph('/me');
    expect(expired.status).toBe(401);
    expect(expired.body.error.code).toBe('InvalidAuthenticationToken');
    await fetch(`${emulator.url}/__admin/faults/script`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ match: { op: 'me.get' }, action: { kind: 'error', status: 500 } }),
    });
    expect((await graph('/me')).status).toBe(500);
    emulator.admin.script({ match: { op: 'me.get' }, action: { kind: 'latency', ms: 150 } });
    const t0 = Date.now();
    expect((await graph('/me')).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    emulator.admin.script({ match: { op: 'me.get' }, action: { kind: 'dropRequest' } });
    await expect(graph('/me')).rejects.toThrow();
    const log = await (await fetch(`${emulator.url}/__admin/requests`)).json();
    expect((log as { items: { op: string }[] }).items.filter((r) => r.op === 'me.get')).toHaveLength(4);
    expect(() => emulator.admin.script({ times: 0, action: { kind: 'dropRequest' } })).toThrow(
      /positive integer/,
    );
  });
});
