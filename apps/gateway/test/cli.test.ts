import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DEFAULT_TOOLSETS, hashApiKey, TOOLSETS } from '@calgate/store';
import { createTestDatabase, type TestDatabase, until } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HARD_PASSWORD,
  startRadicale,
  type TestCaldavServer,
} from '../../../packages/providers/test/caldav/servers.ts';
import { main } from '../src/cli.ts';
import { loadConfig } from '../src/config.ts';

/** The NAME=value settings of an emulator's "Point Calgate at it:" line. */
function printedSettings(out: string): Record<string, string> {
  const line = out.split('\n').find((text) => text.startsWith('Point Calgate at it: ')) ?? '';
  return Object.fromEntries(
    line
      .slice('Point Calgate at it: '.length)
      .trim()
      .split(/\s+/)
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
}

const run = promisify(execFile);
const BIN = fileURLToPath(new URL('../src/bin/calgate.ts', import.meta.url));

describe('calgate CLI', () => {
  let db: TestDatabase;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    db = await createTestDatabase({ migrated: false });
    env = { DATABASE_URL: db.url, ENCRYPTION_KEY: randomBytes(32).toString('base64') };
  });
  afterAll(async () => {
    await db.close();
  });

  async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await main(args, env, { out: (t) => (out += `${t}\n`), err: (t) => (err += `${t}\n`) });
    return { code, out, err };
  }

  async function json<T>(...args: string[]): Promise<T> {
    const result = await cli(...args, '--json');
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    return JSON.parse(result.out) as T;
  }

  it('migrates an empty database, then again as a no-op', async () => {
    const first = await json<{ applied: string[] }>('migrate');
    expect(first.applied.length).toBeGreaterThan(0);
    const second = await json<{ applied: string[]; alreadyApplied: string[] }>('migrate');
    expect(second.applied).toEqual([]);
    expect(second.alreadyApplied).toEqual(first.applied);
  });

  it('creates tenants, keys, calendars and grants, and revokes them', async () => {
    const tenant = await json<{ id: string }>('tenant', 'create', '--name', 'Acme');
    expect(tenant.id).toMatch(/^tnt_/);

    // A real process: stdout is exactly one JSON object with the id and the secret.
    const { stdout } = await run(process.execPath, [BIN, 'key', 'create', '--name', 'agent', '--json'], {
      env: { ...process.env, ...env },
    });
    const key = JSON.parse(stdout) as { id: string; secret: string };
    expect(Object.keys(key).sort()).toEqual(['id', 'secret']);
    expect(key.id).toMatch(/^key_/);
    expect(key.secret).toMatch(/^cg_live_[A-Za-z0-9]{32}$/);
    const stored = await db.pool.query('SELECT hash, prefix FROM api_keys WHERE id = $1', [key.id]);
    expect(Buffer.from(stored.rows[0].hash).equals(Buffer.from(hashApiKey(key.secret)))).toBe(true);
    expect(key.secret.startsWith(stored.rows[0].prefix)).toBe(true);

    const list = await json<{ id: string; prefix: string; secret?: string }[]>('key', 'list');
    expect(list.map((k) => k.id)).toEqual([key.id]);
    expect(JSON.stringify(list)).not.toContain(key.secret);

    const calendar = await json<{ id: string; timeZone: string }>(
      'calendar',
      'create',
      '--name',
      'Team',
      '--time-zone',
      'Asia/Kathmandu',
    );
    expect(calendar.id).toMatch(/^cal_/);
    expect(calendar.timeZone).toBe('Asia/Kathmandu');

    const grant = await json<{ canRead: boolean; canWrite: boolean }>(
      'grant',
      '--key',
      key.id,
      '--calendar',
      calendar.id,
      '--write',
    );
    expect(grant).toMatchObject({ canRead: true, canWrite: true });
    const revoked = await json<{ removed: boolean }>(
      'revoke-grant',
      '--key',
      key.id,
      '--calendar',
      calendar.id,
    );
    expect(revoked.removed).toBe(true);

    await json('key', 'revoke', '--key', key.id);
    const after = await json<{ revokedAt: string | null }[]>('key', 'list');
    expect(after[0]?.revokedAt).not.toBeNull();
  });

  it('reports mistakes clearly with a non-zero exit code and changes nothing', async () => {
    const before = await db.pool.query('SELECT count(*)::int AS n FROM calendars');
    const badZone = await cli('calendar', 'create', '--name', 'X', '--time-zone', 'Mars/Olympus');
    expect(badZone.code).toBe(2);
    expect(badZone.err).toMatch(/not an IANA time zone/);
    const noName = await cli('tenant', 'create');
    expect(noName.err).toMatch(/--name is required/);
    const unknownFlag = await cli('key', 'create', '--nmae', 'x');
    expect(unknownFlag.code).toBe(2);
    expect(unknownFlag.err).toMatch(/nmae/);
    const unknownKey = await cli('key', 'revoke', '--key', 'key_nope', '--json');
    expect(unknownKey.code).toBe(1);
    expect(unknownKey.err).toMatch(/No API key key_nope/);
    const grantNothing = await cli('grant', '--key', 'key_x', '--calendar', 'cal_x');
    expect(grantNothing.err).toMatch(/--read and\/or --write/);
    const after = await db.pool.query('SELECT count(*)::int AS n FROM calendars');
    expect(after.rows[0].n).toBe(before.rows[0].n);
  });

  it("keeps the first tenant's commands working without --tenant until another tenant takes its name", async () => {
    const [first] = await json<{ id: string; name: string }[]>('tenant', 'list');
    const second = await json<{ id: string }>('tenant', 'create', '--name', 'Second');
    const mine = await json<{ id: string }>('key', 'create', '--name', 'first tenant key');
    const owner = await db.pool.query('SELECT tenant_id FROM api_keys WHERE id = $1', [mine.id]);
    expect(owner.rows[0].tenant_id).toBe(first?.id);
    // --tenant takes a name as well as an id.
    const byName = await json<{ id: string }>(
      'key',
      'create',
      '--name',
      'second tenant key',
      '--tenant',
      'Second',
    );
    const secondOwner = await db.pool.query('SELECT tenant_id FROM api_keys WHERE id = $1', [byName.id]);
    expect(secondOwner.rows[0].tenant_id).toBe(second.id);
    const unknown = await cli('key', 'list', '--tenant', 'Nobody');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/No tenant Nobody\./);

    const namesake = await json<{ id: string }>('tenant', 'create', '--name', first?.name ?? '');
    const before = await db.pool.query('SELECT count(*)::int AS n FROM api_keys');
    const result = await cli('key', 'create', '--name', 'which tenant?');
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/Several tenants exist; pass --tenant/);
    const shared = await cli('key', 'list', '--tenant', first?.name ?? '');
    expect(shared.code).toBe(2);
    expect(shared.err).toContain(`Several tenants are named ${first?.name}; pass --tenant with an id`);
    expect(shared.err).toContain(namesake.id);
    const after = await db.pool.query('SELECT count(*)::int AS n FROM api_keys');
    expect(after.rows[0].n).toBe(before.rows[0].n);
  });

  it('lists every toolset in its usage, with the default ones', async () => {
    const usage = await cli('--help');
    for (const toolset of TOOLSETS) {
      expect(usage.out).toMatch(new RegExp(`sees: [a-z, ]*\\b${toolset}\\b`));
    }
    expect(usage.out).toContain(`(default ${DEFAULT_TOOLSETS.join(',')})`);
  });

  it('refuses invalid configuration with a message naming the variable', async () => {
    const result = await main(
      ['key', 'list'],
      { DATABASE_URL: 'mysql://nope' },
      { out: () => {}, err: (t) => expect(t).toMatch(/DATABASE_URL: must be a postgres/) },
    );
    expect(result).toBe(1);
  });

  it("sets a tenant's time zone and name; tenant list shows them; none clears the zone; a bad zone changes nothing", async () => {
    const tenant = await json<{ id: string }>('tenant', 'create', '--name', 'Zoned');
    const t = ['--tenant', tenant.id];
    expect(await json('tenant', 'set', '--time-zone', 'Europe/Berlin', ...t)).toEqual({
      id: tenant.id,
      name: 'Zoned',
      timeZone: 'Europe/Berlin',
    });
    const bad = await cli('tenant', 'set', '--time-zone', 'Mars/Olympus', ...t);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--time-zone 'Mars\/Olympus' is not an IANA time zone/);
    const nothing = await cli('tenant', 'set', ...t);
    expect(nothing.code).toBe(2);
    expect(nothing.err).toMatch(/Pass --name and\/or --time-zone/);
    // A calendar created without a zone takes the workspace's.
    const home = await json<{ timeZone: string }>('calendar', 'create', '--name', 'Home', ...t);
    expect(home.timeZone).toBe('Europe/Berlin');
    const listed = await json<{ id: string; name: string; timeZone: string | null }[]>('tenant', 'list');
    expect(listed.find((item) => item.id === tenant.id)).toMatchObject({
      name: 'Zoned',
      timeZone: 'Europe/Berlin',
    });
    const human = await cli('tenant', 'set', '--name', 'Zoned Inc', '--time-zone', 'none', ...t);
    expect(human.out).toBe(
      `Tenant ${tenant.id} (Zoned Inc): time zone not set (each key’s default calendar’s).\n`,
    );
    const { rows } = await db.pool.query('SELECT name, time_zone FROM tenants WHERE id = $1', [tenant.id]);
    expect(rows[0]).toEqual({ name: 'Zoned Inc', time_zone: null });
  });

  it("sets a key's default calendar and time zone; key list shows them; bad values change nothing", async () => {
    const tenant = await json<{ id: string }>('tenant', 'create', '--name', 'Defaults');
    const t = ['--tenant', tenant.id];
    const key = await json<{ id: string }>('key', 'create', '--name', 'bot', ...t);
    const home = await json<{ id: string }>('calendar', 'create', '--name', 'Home', ...t);
    const work = await json<{ id: string }>('calendar', 'create', '--name', 'Work', ...t);
    await json('grant', '--key', key.id, '--calendar', home.id, '--read', ...t);

    const set = await json<{ id: string; defaultCalendarId: string | null; timeZone: string | null }>(
      'key',
      'set',
      '--key',
      key.id,
      '--default-calendar',
      home.id,
      '--time-zone',
      'Asia/Tokyo',
      ...t,
    );
    expect(set).toEqual({
      id: key.id,
      defaultCalendarId: home.id,
      timeZone: 'Asia/Tokyo',
      toolsets: ['calendar', 'booking', 'search'],
      defaultAgentId: null,
      hijackPolicy: 'ask',
    });
    const listed = await json<{ id: string; defaultCalendarId: string | null; timeZone: string | null }[]>(
      'key',
      'list',
      ...t,
    );
    expect(listed).toEqual([
      expect.objectContaining({ id: key.id, defaultCalendarId: home.id, timeZone: 'Asia/Tokyo' }),
    ]);
    const human = await cli('key', 'list', ...t);
    expect(human.out).toContain(`default calendar ${home.id}  time zone Asia/Tokyo`);

    const mistakes: [string[], number, RegExp][] = [
      [['--default-calendar', work.id], 1, new RegExp(`cannot read calendar ${work.id} \\('Work'\\)`)],
      [['--default-calendar', 'cal_nope'], 1, /No calendar cal_nope in this tenant\./],
      [['--time-zone', 'Mars/Olympus'], 1, /Unknown time zone 'Mars\/Olympus'/],
      [['--default-calendar', ''], 2, /--default-calendar needs a calendar id/],
      [[], 2, /Pass --default-calendar, --time-zone and\/or --default-agent/],
      [['--default-agent', ''], 2, /--default-agent needs an agent id/],
      [['--hijack-policy', 'lax'], 2, /--hijack-policy: use one of strict, ask, off\./],
    ];
    for (const [flags, code, message] of mistakes) {
      const result = await cli('key', 'set', '--key', key.id, ...flags, ...t);
      expect(result.code, flags.join(' ')).toBe(code);
      expect(result.err).toMatch(message);
    }
    const unknownKey = await cli('key', 'set', '--key', 'key_nope', '--time-zone', 'UTC', ...t);
    expect(unknownKey.err).toMatch(/No API key key_nope in this tenant/);
    expect(await json('key', 'list', ...t)).toEqual(listed);

    const cleared = await json<{ defaultCalendarId: string | null; timeZone: string | null }>(
      'key',
      'set',
      '--key',
      key.id,
      '--default-calendar',
      'none',
      ...t,
    );
    expect(cleared).toMatchObject({ defaultCalendarId: null, timeZone: 'Asia/Tokyo' });
    const automatic = await cli('key', 'list', ...t);
    expect(automatic.out).toContain('default calendar automatic  time zone Asia/Tokyo');

    const agent = await json<{ defaultAgentId: string | null }>(
      'key',
      'set',
      '--key',
      key.id,
      '--default-agent',
      'agent-4f1c',
      ...t,
    );
    expect(agent).toMatchObject({ defaultAgentId: 'agent-4f1c', timeZone: 'Asia/Tokyo' });
    expect(await json('key', 'set', '--key', key.id, '--default-agent', 'none', ...t)).toMatchObject({
      defaultAgentId: null,
    });
    const strict = await cli('key', 'set', '--key', key.id, '--hijack-policy', 'strict', ...t);
    expect(strict.out).toContain('hijack policy strict.');
    expect(await json('key', 'list', ...t)).toEqual([expect.objectContaining({ hijackPolicy: 'strict' })]);
  });
});

describe('calgate key --toolsets', () => {
  let db: TestDatabase;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    db = await createTestDatabase();
    env = { DATABASE_URL: db.url, ENCRYPTION_KEY: randomBytes(32).toString('base64') };
  });
  afterAll(async () => {
    await db.close();
  });

  async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await main(args, env, { out: (t) => (out += `${t}\n`), err: (t) => (err += `${t}\n`) });
    return { code, out, err };
  }

  it('creates a key with toolsets, changes them, lists them; unknown names are a usage error that changes nothing', async () => {
    expect((await cli('tenant', 'create', '--name', 'Sets')).code).toBe(0);
    const created = await cli('key', 'create', '--name', 'narrow', '--toolsets', 'search, calendar');
    expect(created.code).toBe(0);
    expect(created.out).toMatch(/^Created API key key_\w+ \(toolsets calendar,search\)\./);
    const keyId = /key_\w+/.exec(created.out)?.[0] ?? '';
    const valid = 'the toolsets are calendar, booking, search, rules, scheduler, ics.';

    const refused = await cli('key', 'create', '--name', 'bad', '--toolsets', 'calendar,agenda');
    expect(refused.code).toBe(2);
    expect(refused.err).toContain(`--toolsets: Unknown toolset 'agenda': ${valid}`);
    const setBad = await cli('key', 'set', '--key', keyId, '--toolsets', '');
    expect(setBad.code).toBe(2);
    expect(setBad.err).toContain(`--toolsets: Give at least one toolset: ${valid}`);

    const set = await cli('key', 'set', '--key', keyId, '--toolsets', 'booking,calendar', '--json');
    expect(set.code).toBe(0);
    expect(JSON.parse(set.out)).toMatchObject({ id: keyId, toolsets: ['calendar', 'booking'] });
    const listed = await cli('key', 'list', '--json');
    expect(
      (JSON.parse(listed.out) as { name: string; toolsets: string[] }[]).map((k) => [k.name, k.toolsets]),
    ).toEqual([['narrow', ['calendar', 'booking']]]);
    expect((await cli('key', 'list')).out).toContain('  toolsets calendar,booking');
  });
});

describe('calgate emulator google', () => {
  it('serves the emulator with a seed on the given port', async () => {
    const { mkdtemp, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { spawn } = await import('node:child_process');
    const { freePort } = await import('@calgate/testkit');
    const dir = await mkdtemp(join(tmpdir(), 'calgate-emu-'));
    const seedFile = join(dir, 'seed.json');
    await writeFile(seedFile, JSON.stringify({ accounts: [{ email: 'eve@example.com' }] }));
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [BIN, 'emulator', 'google', '--port', String(port), '--seed', seedFile],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    try {
      let out = '';
      child.stdout?.on('data', (chunk) => (out += String(chunk)));
      // Starting a process on a loaded machine can take seconds.
      const deadline = Date.now() + 25_000;
      while (!out.includes('OUTBOUND_ALLOW_PRIVATE') && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(out).toContain(`http://127.0.0.1:${port}`);
      // The settings it prints are ones Calgate starts with (a loopback API root needs OUTBOUND_ALLOW_PRIVATE).
      const printed = printedSettings(out);
      expect(printed).toEqual({
        GOOGLE_API_ROOT_URL: `http://127.0.0.1:${port}/`,
        GOOGLE_OAUTH_URL: `http://127.0.0.1:${port}`,
        OUTBOUND_ALLOW_PRIVATE: 'true',
      });
      expect(loadConfig({ ...printed, DATABASE_URL: 'postgres://127.0.0.1/x' }).google.apiRootUrl).toBe(
        printed.GOOGLE_API_ROOT_URL,
      );
      const state = (await (await fetch(`http://127.0.0.1:${port}/__admin/state`)).json()) as {
        accounts: string[];
      };
      expect(state.accounts).toContain('eve@example.com');
    } finally {
      child.kill('SIGTERM');
    }
  });
});

describe('calgate emulator microsoft', () => {
  it('serves the Graph emulator with a seed on the given port and prints its settings', async () => {
    const { mkdtemp, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { spawn } = await import('node:child_process');
    const { freePort } = await import('@calgate/testkit');
    const dir = await mkdtemp(join(tmpdir(), 'calgate-emu-'));
    const seedFile = join(dir, 'seed.json');
    await writeFile(
      seedFile,
      JSON.stringify({ users: [{ email: 'eve@contoso.example', timeZone: 'Europe/Berlin' }] }),
    );
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [BIN, 'emulator', 'microsoft', '--port', String(port), '--seed', seedFile],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    try {
      let out = '';
      child.stdout?.on('data', (chunk) => (out += String(chunk)));
      // Starting a process on a loaded machine can take seconds.
      const deadline = Date.now() + 25_000;
      while (!out.includes('OUTBOUND_ALLOW_PRIVATE') && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(out).toContain(`Microsoft Graph emulator on http://127.0.0.1:${port}`);
      expect(out).toContain(`MICROSOFT_GRAPH_URL=http://127.0.0.1:${port}/v1.0`);
      const printed = printedSettings(out);
      expect(printed.OUTBOUND_ALLOW_PRIVATE).toBe('true');
      expect(loadConfig({ ...printed, DATABASE_URL: 'postgres://127.0.0.1/x' }).microsoft.graphUrl).toBe(
        `http://127.0.0.1:${port}/v1.0`,
      );
      const issued = (await (
        await fetch(`http://127.0.0.1:${port}/__admin/tokens`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'eve@contoso.example' }),
        })
      ).json()) as { access_token: string };
      const settings = (await (
        await fetch(`http://127.0.0.1:${port}/v1.0/me/mailboxSettings`, {
          headers: { authorization: `Bearer ${issued.access_token}` },
        })
      ).json()) as { timeZone: string };
      expect(settings.timeZone).toBe('W. Europe Standard Time');
    } finally {
      child.kill('SIGTERM');
    }
  });
});

describe('calgate serve: a taken port, and the first-run banner', () => {
  let db: TestDatabase;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    db = await createTestDatabase();
    env = {
      PATH: process.env.PATH,
      DATABASE_URL: db.url,
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'warn',
    };
  });
  afterAll(async () => {
    await db.close();
  });

  it('prints one line naming the port and exits 1 when another process holds it', async () => {
    const { createServer } = await import('node:net');
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const address = holder.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    try {
      const failure = await run(process.execPath, [BIN, 'serve'], {
        env: { ...env, PORT: String(port) },
      }).then(
        () => undefined,
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
      expect(failure?.code).toBe(1);
      expect(failure?.stderr).toBe(
        `Port ${port} on 127.0.0.1 is in use: stop the other process or set PORT.\n`,
      );
    } finally {
      holder.close();
    }
  });

  /** Starts `calgate serve`, returns what it printed once listening (up to `bannerEnd`), and stops it. */
  async function serveOutput(bannerEnd?: string): Promise<string> {
    const { spawn } = await import('node:child_process');
    const { freePort } = await import('@calgate/testkit');
    const port = await freePort();
    const child = spawn(process.execPath, [BIN, 'serve'], {
      env: { ...env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout?.on('data', (chunk) => (out += String(chunk)));
    child.stderr?.on('data', (chunk) => (out += String(chunk)));
    try {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const ready = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
        if (ready?.ok || child.exitCode !== null || Date.now() > deadline) {
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      // The banner is written right after listening: wait for its end, or a moment when none is due.
      if (bannerEnd === undefined) {
        await new Promise((resolve) => setTimeout(resolve, 300));
      } else {
        await until(() => out.includes(bannerEnd) || child.exitCode !== null, 20_000, 20);
      }
      return out.replaceAll(String(port), '<port>');
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  }

  it('names the dashboard and its future owner until the first account exists', async () => {
    const first = await serveOutput('before anyone else can reach it.\n');
    expect(first).toContain('Dashboard: http://127.0.0.1:<port>/\n');
    expect(first).toContain(
      'No account exists yet: the first person to sign up on the dashboard becomes its owner.',
    );

    const { UserRepository } = await import('@calgate/store');
    const signedUp = await new UserRepository(db.prisma).signUpFirst({
      email: 'owner@example.com',
      passwordHash: 'not-a-real-hash',
    });
    expect(signedUp.ok).toBe(true);
    const second = await serveOutput();
    expect(second).not.toContain('Dashboard:');
    expect(second).not.toContain('first person');
  }, 90_000);
});

describe('calgate tenant create --owner-email (plain text)', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.close();
  });

  it('prints the tenant and the one-time owner invitation link, which the invitation lookup accepts', async () => {
    const email = `owner-${randomBytes(4).toString('hex')}@initech.test`;
    // A real process as an operator runs it, without --json and without SMTP.
    const { stdout, stderr } = await run(
      process.execPath,
      [BIN, 'tenant', 'create', '--name', 'Initech', '--owner-email', email],
      {
        env: {
          PATH: process.env.PATH,
          DATABASE_URL: db.url,
          ENCRYPTION_KEY: randomBytes(32).toString('base64'),
          PUBLIC_URL: 'https://calgate.example.test',
          LOG_LEVEL: 'warn',
        },
      },
    );
    expect(stderr).toBe('');
    const lines = stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^Created tenant tnt_\w+ \(Initech\)\.$/);
    expect(lines[1]).toBe(`Owner invitation for ${email} (valid 7 days, works once):`);
    expect(lines[2]).toMatch(/^https:\/\/calgate\.example\.test\/invite\?token=[\w-]+$/);
    expect(lines[3]).toBe('SMTP_URL is not set: pass the link on yourself.');

    const tenantId = /tnt_\w+/.exec(lines[0] ?? '')?.[0];
    const token = new URL(lines[2] ?? '').searchParams.get('token') ?? '';
    const { PeopleRepository } = await import('@calgate/store');
    const invitation = await new PeopleRepository(db).lookupInvitation(token);
    expect(invitation).toMatchObject({
      ok: true,
      value: { email, role: 'owner', tenantId, tenantName: 'Initech' },
    });
  }, 60_000);
});

describe('calgate connect caldav: the password', () => {
  let db: TestDatabase;
  let env: NodeJS.ProcessEnv;
  let server: TestCaldavServer;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startRadicale();
    await server.makeCalendar('/alice/home/', { displayName: 'Home' });
    env = {
      PATH: process.env.PATH,
      DATABASE_URL: db.url,
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      OUTBOUND_ALLOW_PRIVATE: 'true',
    };
    const made = await main(['tenant', 'create', '--name', 'Pty'], env, { out: () => {}, err: () => {} });
    expect(made).toBe(0);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await db?.close();
  });

  const connectArgs = () => [
    'connect',
    'caldav',
    '--url',
    server.root,
    '--username',
    server.username,
    '--json',
  ];

  it('refuses a --password flag, naming CALDAV_PASSWORD and never repeating the value', async () => {
    for (const flag of [['--password', 'hunter2-secret'], ['--password=hunter2-secret']]) {
      let out = '';
      let err = '';
      const code = await main([...connectArgs(), ...flag], env, {
        out: (t) => (out += t),
        err: (t) => (err += t),
      });
      expect(code).toBe(2);
      expect(out).toBe('');
      expect(err.split('\n')[0]).toBe(
        'calgate takes no --password flag (a command line is seen by other users and kept in shell history): set the environment variable CALDAV_PASSWORD, or run the command on a terminal to be asked for the password.',
      );
      expect(err).not.toContain('hunter2');
    }
    const { rows } = await db.pool.query('SELECT id FROM connections');
    expect(rows).toEqual([]);
  });

  it('refuses plainly when CALDAV_PASSWORD is unset and no terminal is attached', async () => {
    const { CALDAV_PASSWORD: _unset, ...rest } = { ...process.env, ...env };
    const failure = await run(process.execPath, [BIN, ...connectArgs()], { env: rest }).catch(
      (e: unknown) => e as { code: number; stdout: string; stderr: string },
    );
    expect(failure).toMatchObject({ code: 2, stdout: '' });
    expect((failure as { stderr: string }).stderr.split('\n')[0]).toBe(
      'Set the CalDAV password in the environment variable CALDAV_PASSWORD (it is never a flag), or run this on a terminal to be asked for it.',
    );
    const { rows } = await db.pool.query('SELECT id FROM connections');
    expect(rows).toEqual([]);
  });

  /** Runs connect on a pseudo-terminal (script(1)), typing `typed` once the prompt is up. */
  async function onTerminal(typed: string): Promise<{ code: number | null; screen: string }> {
    const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    const command = [process.execPath, BIN, ...connectArgs()].map(quote).join(' ');
    const { CALDAV_PASSWORD: _unset, ...rest } = { ...process.env, ...env };
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      env: { ...rest, TERM: 'dumb' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let screen = '';
    child.stdout.on('data', (d: Buffer) => {
      screen += d.toString('utf8');
    });
    child.stderr.on('data', (d: Buffer) => {
      screen += d.toString('utf8');
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      // Typed only once the prompt is up: the terminal is then raw, so nothing typed is echoed.
      await until(async () => screen.includes('CalDAV password:'), 20_000);
      child.stdin.write(typed);
      return { code: await exited, screen };
    } finally {
      child.stdin.end();
      if (child.exitCode === null) {
        child.kill();
      }
    }
  }

  it('on a terminal, Ctrl-C at the prompt cancels and connects nothing', async () => {
    const { code, screen } = await onTerminal('abc\u0003');
    expect(code).toBe(2);
    expect(screen).toMatch(/^CalDAV password: \r\nCancelled\./);
    expect(screen).not.toContain('abc');
    const { rows } = await db.pool.query('SELECT id FROM connections');
    expect(rows).toEqual([]);
  });

  it('asks on a terminal (a pseudo-terminal from script(1)) and takes the password without echoing it, backspace included', async () => {
    // A slip corrected with backspace (one per character, multi-byte ones too) before the password.
    const { code, screen } = await onTerminal(`wö✓${'\u007f'.repeat(3)}${HARD_PASSWORD}\r`);
    expect(code, screen).toBe(0);
    // The answer is typed on the prompt's own line; Enter ends that line, then the JSON follows.
    expect(screen).toMatch(/^CalDAV password: \r\n\{"connectionId":"con_/);
    expect(screen).toContain('"summary":"Home"');
    for (const part of [HARD_PASSWORD, 'pä:ss', 'wörd', '%41', '✓']) {
      expect(screen).not.toContain(part);
    }
    expect(screen).not.toMatch(/\*{4,}/);
    const { rows } = await db.pool.query("SELECT account_email FROM connections WHERE provider = 'caldav'");
    expect(rows).toEqual([{ account_email: `${server.username}@${new URL(server.root).host}` }]);
  });
});
