/**
 * Microsoft accounts in gateway tests: the Graph emulator with the app registration Calgate signs
 * in as, the MICROSOFT_* settings that point a gateway (and the CLI) at it, refresh tokens as if
 * an account had consented, and "Connect Microsoft" as a browser goes through it (the emulator's
 * /authorize redirects at once with a code).
 */
import { randomBytes } from 'node:crypto';
import {
  type MicrosoftEmulator,
  type MicrosoftSeed,
  startMicrosoftEmulator,
} from '@calgate/microsoft-emulator';
import { MICROSOFT_READ_SCOPES } from '@calgate/providers';
import { expect } from 'vitest';
import type { TestGateway } from './harness.ts';

export const MS_CLIENT = { clientId: 'c0ffee00-0000-4000-8000-000000000028', clientSecret: 'ms-app-secret' };

export interface TestMicrosoftEmulator extends MicrosoftEmulator {
  /** MICROSOFT_* settings for the emulator as the app registration, and one ENCRYPTION_KEY. */
  env: Record<string, string>;
  /** A refresh token of the account, as if it had consented to `scopes` (default: read only). */
  refreshToken(email: string, scopes?: readonly string[]): string;
}

/** The emulator with `users`, whose app registration redirects to `${publicUrl}/oauth/microsoft/callback`. */
export async function startMicrosoftTestEmulator(
  seed: Omit<MicrosoftSeed, 'clients'>,
  publicUrl = 'http://calgate.test',
): Promise<TestMicrosoftEmulator> {
  const emulator = await startMicrosoftEmulator({
    seed: {
      ...seed,
      clients: [{ ...MS_CLIENT, redirectUris: [`${publicUrl}/oauth/microsoft/callback`] }],
    },
  });
  return Object.assign(emulator, {
    env: {
      MICROSOFT_CLIENT_ID: MS_CLIENT.clientId,
      MICROSOFT_CLIENT_SECRET: MS_CLIENT.clientSecret,
      MICROSOFT_GRAPH_URL: emulator.graphUrl,
      MICROSOFT_LOGIN_URL: emulator.loginUrl,
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    },
    refreshToken: (email: string, scopes: readonly string[] = MICROSOFT_READ_SCOPES) =>
      emulator.admin.issueTokens({
        email,
        clientId: MS_CLIENT.clientId,
        scopes: scopes.filter((scope) => scope !== 'offline_access'),
        offline: true,
      }).refresh_token as string,
  });
}

/**
 * "Connect Microsoft" as the dashboard's browser does it for `cookie`: /oauth/microsoft/start with
 * `query`, Microsoft's authorize endpoint (which redirects at once), then Calgate's callback.
 * Returns the callback URL Microsoft sent the browser to, and Calgate's answer.
 */
export async function connectMicrosoftByConsent(
  gw: TestGateway,
  cookie: string,
  query: string,
): Promise<{ callback: URL; authorize: URL; response: Response }> {
  const start = await fetch(`${gw.url}/oauth/microsoft/start?${query}`, {
    headers: { cookie },
    redirect: 'manual',
  });
  expect(start.status, await start.clone().text()).toBe(302);
  const authorize = new URL(start.headers.get('location') as string);
  const back = await fetch(authorize, { redirect: 'manual' });
  expect(back.status).toBe(302);
  const callback = new URL(back.headers.get('location') as string);
  expect(callback.pathname).toBe('/oauth/microsoft/callback');
  const response = await fetch(`${gw.url}${callback.pathname}${callback.search}`, { headers: { cookie } });
  return { callback, authorize, response };
}
