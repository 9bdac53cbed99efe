import { afterEach } from 'vitest';

export type { MicrosoftSeed } from '../src/index.ts';

import { type MicrosoftEmulator, type MicrosoftSeed, startMicrosoftEmulator } from '../src/index.ts';

const running: MicrosoftEmulator[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.close()));
});

export const ALICE = 'alice@contoso.example';
export const BOB = 'bob@contoso.example';

export const baseSeed = (): MicrosoftSeed => ({
  users: [
    {
      email: ALICE,
      displayName: 'Alice Example',
      timeZone: 'W. Europe Standard Time',
      calendars: [
        { name: 'Calendar', isDefaultCalendar: true },
        { name: 'Team', color: 'lightGreen' },
        { name: "Bob's calendar", owner: { name: 'Bob', address: BOB }, canEdit: false },
      ],
    },
    { email: BOB, displayName: 'Bob Example', timeZone: 'America/New_York' },
  ],
});

export async function start(seed: MicrosoftSeed = baseSeed(), options: { shortPages?: boolean } = {}) {
  const emulator = await startMicrosoftEmulator({ seed, shortPages: options.shortPages ?? false });
  running.push(emulator);
  const first = seed.users?.[0];
  const token = emulator.admin.issueTokens({
    email: first?.userPrincipalName ?? first?.email ?? ALICE,
  }).access_token;
  const graph = async (
    path: string,
    init: { method?: string; body?: unknown; headers?: Record<string, string>; token?: string | null } = {},
  ) => {
    const headers: Record<string, string> = { ...init.headers };
    const bearer = init.token === undefined ? token : init.token;
    if (bearer !== null) {
      headers.authorization = `Bearer ${bearer}`;
    }
    if (init.body !== undefined) {
      headers['content-type'] = 'application/json';
    }
    const url = path.startsWith('http') ? path : `${emulator.graphUrl}${path}`;
    const res = await fetch(url, {
      method: init.method ?? 'GET',
      headers,
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
    const text = await res.text();
    const body: Loose = text === '' ? undefined : JSON.parse(text);
    return { status: res.status, headers: res.headers, body };
  };
  const calendars = emulator.admin.calendars(first?.email ?? ALICE) as { id: string; name: string }[];
  const calendarId = (name: string) => calendars.find((c) => c.name === name)?.id as string;
  return { emulator, token, graph, calendarId };
}

// biome-ignore lint/suspicious/noExplicitAny: Graph bodies are read loosely in tests
export type Loose = any;
