/** Shared fixtures: a seeded emulator and googleapis clients pointed at it over real HTTP. */

import { type calendar_v3, calendar as googleCalendar } from '@googleapis/calendar';
import { OAuth2Client } from 'google-auth-library';
import { type EmulatorSeed, type GoogleEmulator, startGoogleEmulator } from '../src/index.ts';

export const ANN = 'ann@example.com';
export const BOB = 'bob@example.com';
export const ROBOT = 'robot@calgate-test.iam.gserviceaccount.com';
export const TEAM = 'team@group.calendar.google.com';
export const CLIENT = {
  clientId: 'calgate-test.apps.googleusercontent.com',
  clientSecret: 'GOCSPX-test-secret',
  redirectUris: ['http://localhost:8787/oauth/google/callback'],
};
export const CALENDAR_SCOPE = 'https://www.googleapis.com/auth/calendar';

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
            { email: ANN, role: 'reader' },
            { email: ROBOT, role: 'writer' },
          ],
        },
      ],
    },
  ],
  serviceAccounts: [{ email: ROBOT }],
});

export async function startSeeded(seed: EmulatorSeed = baseSeed()): Promise<GoogleEmulator> {
  return startGoogleEmulator({ seed });
}

/** A Calendar client for an account, using an admin-issued token; retries off unless asked. */
export function calendarFor(emulator: GoogleEmulator, email: string, retry = false): calendar_v3.Calendar {
  const { access_token } = emulator.admin.issueTokens({ email, scopes: [CALENDAR_SCOPE] });
  const auth = new OAuth2Client({ endpoints: emulator.oauthEndpoints });
  auth.setCredentials({ access_token });
  return googleCalendar({ version: 'v3', auth, rootUrl: `${emulator.url}/`, retry });
}

export function oauthClient(emulator: GoogleEmulator): OAuth2Client {
  return new OAuth2Client({
    clientId: CLIENT.clientId,
    clientSecret: CLIENT.clientSecret,
    redirectUri: CLIENT.redirectUris[0] as string,
    endpoints: emulator.oauthEndpoints,
  });
}

/** What a googleapis call failed with: HTTP status and Google's error body. */
export async function failure(
  promise: Promise<unknown>,
): Promise<{ status: number; data: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    const response = (error as { response?: { status: number; data: Record<string, unknown> } }).response;
    if (response) {
      return { status: response.status, data: response.data };
    }
    throw error;
  }
  throw new Error('expected the call to fail');
}

/** The reason of a Calendar API error body. */
export function reasonOf(data: Record<string, unknown>): string | undefined {
  const error = data.error as { errors?: { reason?: string }[] } | undefined;
  return error?.errors?.[0]?.reason;
}

export const timed = (dateTime: string, timeZone?: string) =>
  timeZone ? { dateTime, timeZone } : { dateTime };
