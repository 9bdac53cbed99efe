/**
 * The project's Google emulator in a process of its own (so neither server under test shares
 * an event loop with it), seeded with one account and one calendar of events, and OAuth tokens
 * for that account issued through its admin API.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LocalCalendarProvider } from '@calgate/providers';
import { type Database, LocalEventStore } from '@calgate/store';
import { freePort } from '@calgate/testkit';
import { main as calgateCli } from '../../apps/gateway/src/cli.ts';
import { type BenchStack, startBenchStack } from '../lib/stack.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

export const OAUTH_CLIENT = { clientId: 'peer-bench.apps.googleusercontent.com', clientSecret: 'peer-bench' };
export const ACCOUNT = 'ann@example.com';
export const CALENDAR = 'bench@group.calendar.google.com';
export const EVENTS = 50;

export interface BenchEvent {
  summary: string;
  description: string;
  location: string;
  start: { dateTime: string };
  end: { dateTime: string };
  attendees: { email: string }[];
}

/** The benchmark's events: 50 meetings in December 2026, as mcp-overhead seeds them locally. */
export function benchEvents(): BenchEvent[] {
  return Array.from({ length: EVENTS }, (_, i) => {
    const day = String(1 + (i % 28)).padStart(2, '0');
    const hour = String(8 + (i % 9)).padStart(2, '0');
    return {
      summary: `Meeting ${i}`,
      description: 'Agenda: review the numbers, decide next steps.',
      location: 'Room 4',
      start: { dateTime: `2026-12-${day}T${hour}:00:00Z` },
      end: { dateTime: `2026-12-${day}T${hour}:30:00Z` },
      attendees: [{ email: 'ada@example.com' }, { email: 'bob@example.com' }],
    };
  });
}

export interface EmulatorProcess {
  url: string;
  pid: number;
  /** Tokens for ACCOUNT issued to OAUTH_CLIENT, as Google's token endpoint returns them. */
  issueTokens(): Promise<{ access_token: string; refresh_token: string; expires_in: number; scope: string }>;
  stop(): Promise<void>;
}

export async function startEmulatorProcess(): Promise<EmulatorProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'calgate-peer-emulator-'));
  const seedFile = join(dir, 'seed.json');
  await writeFile(
    seedFile,
    JSON.stringify({
      oauthClients: [{ ...OAUTH_CLIENT, redirectUris: ['http://127.0.0.1/oauth/google/callback'] }],
      accounts: [
        {
          email: ACCOUNT,
          timeZone: 'Europe/Berlin',
          calendars: [
            { id: CALENDAR, summary: 'Peer bench', timeZone: 'Europe/Berlin', events: benchEvents() },
          ],
        },
      ],
    }),
  );
  const port = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    ['packages/google-emulator/src/main.ts', '--port', String(port), '--seed', seedFile],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('listening')) {
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`the emulator exited (${code}) before listening`)));
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    pid: child.pid ?? 0,
    async issueTokens() {
      const response = await fetch(`${url}/__admin/tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: ACCOUNT, clientId: OAUTH_CLIENT.clientId, offline: true }),
      });
      if (!response.ok) {
        throw new Error(`the emulator did not issue tokens: ${response.status} ${await response.text()}`);
      }
      return (await response.json()) as Awaited<ReturnType<EmulatorProcess['issueTokens']>>;
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}

/**
 * What every peer bench puts in its stack: the bench's events in Calgate's own calendar, and the
 * emulator's account connected for the stack's key as an operator would
 * (`calgate connect google --refresh-token …`). Returns the connected Google calendar's id.
 */
export async function seedBenchCalendars(
  db: Database,
  calendar: { id: string; timeZone: string },
  google: Record<string, string>,
  refreshToken: string,
): Promise<string> {
  const provider = new LocalCalendarProvider(new LocalEventStore(db));
  const ref = { id: calendar.id, externalId: calendar.id, timeZone: calendar.timeZone };
  for (const event of benchEvents()) {
    await provider.insertEvent(ref, event);
  }
  const keyId = (await db.pool.query<{ id: string }>('SELECT id FROM api_keys')).rows[0]?.id ?? '';
  let out = '';
  let err = '';
  const code = await calgateCli(
    ['connect', 'google', '--refresh-token', refreshToken, '--email', ACCOUNT, '--access', 'read'].concat([
      '--keys',
      keyId,
      '--json',
    ]),
    { ...google, DATABASE_URL: db.pool.options.connectionString ?? '' },
    { out: (text) => (out += text), err: (text) => (err += text) },
  );
  if (code !== 0) {
    throw new Error(`calgate connect google failed (${code}): ${err}`);
  }
  const connected = JSON.parse(out) as { calendars: { id: string; summary: string }[] };
  return connected.calendars.find((c) => c.summary === 'Peer bench')?.id ?? '';
}

/**
 * Calgate's stack for a peer bench: the gateway (with `nodeArgs`) and its worker, which fills the
 * Google calendar's mirror as in a deployment, with Google pointed at the emulator and seeded by
 * seedBenchCalendars. Stops the emulator when the stack does not start. Returns the stack and the
 * connected Google calendar's id.
 */
export async function startGoogleBenchStack(
  emulator: EmulatorProcess,
  nodeArgs: string[],
): Promise<{ stack: BenchStack; googleCalendarId: string }> {
  const tokens = await emulator.issueTokens();
  const google = {
    GOOGLE_CLIENT_ID: OAUTH_CLIENT.clientId,
    GOOGLE_CLIENT_SECRET: OAUTH_CLIENT.clientSecret,
    GOOGLE_API_ROOT_URL: `${emulator.url}/`,
    GOOGLE_OAUTH_URL: emulator.url,
    // The emulator listens on loopback: an API root there needs this.
    OUTBOUND_ALLOW_PRIVATE: 'true',
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  };
  let googleCalendarId = '';
  const stack = await startBenchStack({
    nodeArgs,
    env: google,
    worker: true,
    async seed(db, calendar) {
      googleCalendarId = await seedBenchCalendars(db, calendar, google, tokens.refresh_token);
    },
  }).catch(async (error: unknown) => {
    await emulator.stop();
    throw error;
  });
  if (googleCalendarId === '') {
    await stack.stop();
    await emulator.stop();
    throw new Error('the emulator calendar was not connected to Calgate');
  }
  return { stack, googleCalendarId };
}
