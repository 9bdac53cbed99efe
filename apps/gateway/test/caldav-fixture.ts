/**
 * CalDAV accounts in gateway tests: the settings a gateway (and the CLI) needs to reach a CalDAV
 * server on loopback (Radicale or Xandikos from packages/providers/test/caldav/servers.ts), and an
 * account connected as an operator connects it, with `calgate connect caldav`.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { TestCaldavServer } from '../../../packages/providers/test/caldav/servers.ts';
import { main } from '../src/cli.ts';
import { HIGH_RATE_LIMITS, type TestGateway } from './harness.ts';

/** Settings for the gateway and the CLI alike: loopback servers allowed, one ENCRYPTION_KEY. */
export function caldavEnv(): Record<string, string> {
  return {
    ...HIGH_RATE_LIMITS,
    OUTBOUND_ALLOW_PRIVATE: 'true',
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  };
}

/** What `calgate connect caldav --json` prints. */
export interface ConnectedCaldav {
  connectionId: string;
  accountEmail: string;
  calendars: { id: string; summary: string }[];
}

/**
 * Connects the server's account to the tenant with `calgate connect caldav --access write`,
 * granting its calendars to the tenant's key. `env` must be the gateway's (its ENCRYPTION_KEY).
 */
export async function connectCaldavAccount(
  gw: TestGateway,
  env: Record<string, string>,
  server: TestCaldavServer,
  tenant: { tenantId: string; keyId: string },
): Promise<ConnectedCaldav> {
  let out = '';
  let err = '';
  const code = await main(
    [
      'connect',
      'caldav',
      '--tenant',
      tenant.tenantId,
      '--url',
      server.root,
      '--username',
      server.username,
      '--access',
      'write',
      '--keys',
      tenant.keyId,
      '--json',
    ],
    { ...env, DATABASE_URL: gw.db.url, CALDAV_PASSWORD: server.password },
    { out: (t) => (out += t), err: (t) => (err += t) },
  );
  expect(code, err).toBe(0);
  return JSON.parse(out) as ConnectedCaldav;
}

/** The id Calgate gave the connected calendar named `summary` (undefined if there is none). */
export function calendarNamed(connected: ConnectedCaldav, summary: string): string | undefined {
  return connected.calendars.find((c) => c.summary === summary)?.id;
}

/** The objects of a calendar collection as the server holds them, by name (PROPFIND, then GETs). */
export async function collectionObjects(
  server: TestCaldavServer,
  collection: string,
): Promise<Map<string, string>> {
  const listing = await server.raw(
    'PROPFIND',
    collection,
    '<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:"><d:prop><d:getetag/></d:prop></d:propfind>',
    { depth: '1', 'content-type': 'application/xml' },
  );
  const hrefs = [...(await listing.text()).matchAll(/<(?:\w+:)?href>([^<]+)<\/(?:\w+:)?href>/g)]
    .map((m) => decodeURIComponent(m[1] as string))
    .filter((href) => href.endsWith('.ics'));
  const out = new Map<string, string>();
  for (const href of hrefs) {
    out.set(href.slice(href.lastIndexOf('/') + 1), await (await server.raw('GET', href)).text());
  }
  return out;
}
