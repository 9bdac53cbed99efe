/** Shared fixtures for the Google provider tests: a seeded emulator over real HTTP, a recording store. */
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type EmulatorSeed, type GoogleEmulator, startGoogleEmulator } from '@calgate/google-emulator';
import {
  type CalendarRef,
  type CredentialStore,
  GoogleCalendarProvider,
  type GoogleEndpoints,
  type GoogleProviderOptions,
  type OAuthCredentials,
} from '../src/index.ts';

export const ANN = 'ann@example.com';
export const BOB = 'bob@example.com';
export const ROBOT = 'robot@calgate-test.iam.gserviceaccount.com';
export const TEAM = 'team@group.calendar.google.com';
export const CLIENT = {
  clientId: 'calgate-test.apps.googleusercontent.com',
  clientSecret: 'GOCSPX-test-secret',
  redirectUris: ['http://localhost:8787/oauth/google/callback'],
};

export const baseSeed = (): EmulatorSeed => ({
  oauthClients: [CLIENT],
  accounts: [
    { email: ANN, name: 'Ann Example', timeZone: 'Europe/Berlin' },
    {
      email: BOB,
      name: 'Bob Example',
      timeZone: 'America/New_York',
      calendars: [
        {
          id: TEAM,
          summary: 'Team',
          timeZone: 'America/New_York',
          shares: [
            { email: ANN, role: 'writer' },
            { email: ROBOT, role: 'writer' },
          ],
          events: [
            {
              summary: 'Team sync',
              start: { dateTime: '2026-01-06T10:00:00', timeZone: 'America/New_York' },
              end: { dateTime: '2026-01-06T11:00:00', timeZone: 'America/New_York' },
            },
          ],
        },
      ],
    },
  ],
  serviceAccounts: [{ email: ROBOT }],
});

export function startEmulator(seed: EmulatorSeed = baseSeed()): Promise<GoogleEmulator> {
  return startGoogleEmulator({ seed });
}

export function endpointsOf(baseUrl: string): GoogleEndpoints {
  return { apiRootUrl: `${baseUrl}/`, oauthUrl: baseUrl };
}

export function clientConfig(baseUrl: string) {
  return {
    clientId: CLIENT.clientId,
    clientSecret: CLIENT.clientSecret,
    redirectUri: CLIENT.redirectUris[0] as string,
    endpoints: endpointsOf(baseUrl),
  };
}

/** A CredentialStore that keeps everything in memory and remembers what happened to it. */
export class RecordingStore implements CredentialStore {
  current: OAuthCredentials;
  loads = 0;
  saved: OAuthCredentials[] = [];
  reauth: string[] = [];

  constructor(initial: OAuthCredentials) {
    this.current = initial;
  }

  async load(): Promise<OAuthCredentials> {
    this.loads += 1;
    return { ...this.current };
  }

  async save(credentials: OAuthCredentials): Promise<void> {
    this.saved.push({ ...credentials });
    this.current = { ...credentials };
  }

  async markNeedsReauth(reason: string): Promise<void> {
    this.reauth.push(reason);
  }
}

/** An OAuth provider for an account whose store holds only a refresh token (issued without consent). */
export function oauthProvider(
  emulator: GoogleEmulator,
  email: string,
  options: Omit<GoogleProviderOptions, 'auth'> & { baseUrl?: string } = {},
): { provider: GoogleCalendarProvider; store: RecordingStore; refreshToken: string } {
  const issued = emulator.admin.issueTokens({ email, clientId: CLIENT.clientId, offline: true });
  const refreshToken = issued.refresh_token as string;
  const store = new RecordingStore({ refreshToken });
  const { baseUrl = emulator.url, ...rest } = options;
  const provider = new GoogleCalendarProvider({
    auth: { kind: 'oauth', client: clientConfig(baseUrl), credentials: store },
    ...rest,
  });
  return { provider, store, refreshToken };
}

export const ref = (externalId: string, timeZone = 'UTC'): CalendarRef => ({
  id: `cal_${externalId.replace(/[^a-z0-9]/gi, '')}`,
  externalId,
  timeZone,
});

/** A pass-through HTTP proxy that records each request's URL and headers on the way to `target`. */
export async function recordingProxy(target: string): Promise<{
  url: string;
  seen: { method: string; url: URL; headers: Record<string, string | string[] | undefined> }[];
  close(): Promise<void>;
}> {
  const seen: { method: string; url: URL; headers: Record<string, string | string[] | undefined> }[] = [];
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? 'GET', url: new URL(req.url ?? '/', target), headers: req.headers });
    const forward = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** What a promise was rejected with (fails the test when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}
