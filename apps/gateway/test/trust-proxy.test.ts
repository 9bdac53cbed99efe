import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';
import { parseTrustProxy } from '../src/http/trust-proxy.ts';
import { startTestGateway, type TestGateway } from './harness.ts';

/**
 * Sign-in attempts are limited per email and client address (five at once), so they show which
 * address the gateway saw: with a trusted proxy the X-Forwarded-For client, without one the
 * proxy's (here every request's) own.
 */
async function signInStatuses(
  gateway: TestGateway,
  email: string,
  forwardedFor: string,
  attempts: number,
): Promise<number[]> {
  const statuses: number[] = [];
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    const response = await fetch(`${gateway.url}/api/v1/auth/signin`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        origin: 'http://calgate.test',
        'x-forwarded-for': forwardedFor,
      },
      body: JSON.stringify({ email, password: 'not-the-password' }),
    });
    statuses.push(response.status);
    await response.body?.cancel();
  }
  return statuses;
}

/** The limiter lives in the run's shared Redis: an address no other test signs in with. */
function freshEmail(): string {
  return `owner-${randomBytes(6).toString('hex')}@example.com`;
}

describe('TRUST_PROXY=1 (one proxy in front)', () => {
  const email = freshEmail();
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({ TRUST_PROXY: '1' });
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  it('limits each forwarded client on its own', async () => {
    expect(await signInStatuses(gateway, email, '203.0.113.7', 6)).toEqual([401, 401, 401, 401, 401, 429]);
    // Another client behind the same proxy still gets its own five attempts.
    expect(await signInStatuses(gateway, email, '198.51.100.9', 1)).toEqual([401]);
    // Only the nearest hop is trusted: a client cannot pick its address by prepending one.
    expect(await signInStatuses(gateway, email, '198.51.100.10, 203.0.113.7', 1)).toEqual([429]);
  });
});

describe('without TRUST_PROXY', () => {
  const email = freshEmail();
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  it('ignores X-Forwarded-For: every request is the connecting address', async () => {
    expect(await signInStatuses(gateway, email, '203.0.113.7', 5)).toEqual([401, 401, 401, 401, 401]);
    expect(await signInStatuses(gateway, email, '198.51.100.9', 1)).toEqual([429]);
  });
});

describe('parseTrustProxy', () => {
  it('reads true/false, hop counts, and addresses or ranges', () => {
    expect(parseTrustProxy('true')).toEqual({ ok: true, value: true });
    expect(parseTrustProxy('false')).toEqual({ ok: true, value: false });
    expect(parseTrustProxy('2')).toEqual({ ok: true, value: 2 });
    expect(parseTrustProxy(' 10.0.0.0/8, 192.168.1.5 ,::1, fd00::/8,loopback')).toEqual({
      ok: true,
      value: ['10.0.0.0/8', '192.168.1.5', '::1', 'fd00::/8', 'loopback'],
    });
  });

  it('refuses anything else at start, naming the entry', () => {
    expect(parseTrustProxy('10.0.0.0/33')).toMatchObject({ ok: false });
    expect(parseTrustProxy('proxy.internal')).toMatchObject({ ok: false });
    expect(() => loadConfig({ TRUST_PROXY: '10.0.0.1,caddy' })).toThrow(ConfigError);
    expect(() => loadConfig({ TRUST_PROXY: '10.0.0.1,caddy' })).toThrow(
      "TRUST_PROXY: 'caddy' is not true, a number of proxy hops, or an IP address or CIDR range",
    );
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
  });
});
