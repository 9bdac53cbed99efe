/**
 * Outlook accounts in the benchmarks: the MICROSOFT_* settings that point an in-process gateway at
 * the Graph emulator, Outlook events in Graph's shape, and an account connected the way
 * `calgate connect microsoft` does it (the refresh token refreshed, `/me` and `/me/calendars`
 * read, calendars recorded and granted).
 */
import type { MicrosoftEmulator, SeedEvent } from '@calgate/microsoft-emulator';
import type { RunningGateway } from '../../apps/gateway/src/serve.ts';

/** Settings of a gateway that reaches Outlook through the emulator as the emulator's own client. */
export function benchMicrosoftEnv(emulator: MicrosoftEmulator): Record<string, string> {
  return {
    MICROSOFT_CLIENT_ID: emulator.client.clientId,
    MICROSOFT_CLIENT_SECRET: emulator.client.clientSecret,
    MICROSOFT_GRAPH_URL: emulator.graphUrl,
    MICROSOFT_LOGIN_URL: emulator.loginUrl,
    // The emulator listens on loopback: API roots there need this.
    OUTBOUND_ALLOW_PRIVATE: 'true',
  };
}

/**
 * Connects the Outlook account to the tenant with read grants for `keyIds`; returns its calendars.
 * The account consents to Calendars.ReadWrite, as the Google benches' accounts consent to full
 * calendar access: a read-only consent records the calendars as `reader`, whose free/busy is then
 * always asked of Graph (a reader may not see whether private events are busy).
 */
export async function connectOutlook(
  gateway: RunningGateway,
  emulator: MicrosoftEmulator,
  tenantId: string,
  email: string,
  keyIds: string[],
): Promise<{ connectionId: string; calendars: { id: string; summary: string }[] }> {
  const refreshToken = emulator.admin.issueTokens({
    email,
    clientId: emulator.client.clientId,
    scopes: ['Calendars.ReadWrite', 'User.Read', 'MailboxSettings.Read'],
    offline: true,
  }).refresh_token as string;
  const connected = await gateway.runtime.deps.dashboard.microsoft.connectOAuth(
    tenantId,
    { refreshToken },
    { access: 'read', keyIds },
  );
  return { connectionId: connected.connectionId, calendars: connected.calendars };
}

/** A timed Outlook event in UTC wall-clock time, as Graph takes it. */
export function outlookEvent(
  subject: string,
  startIso: string,
  endIso: string,
  extra: Partial<SeedEvent> = {},
): SeedEvent {
  const wall = (iso: string) => ({ dateTime: iso.replace(/Z$/, '').slice(0, 19), timeZone: 'UTC' });
  return { subject, start: wall(startIso), end: wall(endIso), ...extra };
}
