import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type LettaEmulator, startLettaEmulator } from '@calgate/letta-emulator';
import { createTestDatabase, type TestDatabase } from '@calgate/testkit';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../src/cli.ts';

const run = promisify(execFile);
const BIN = fileURLToPath(new URL('../src/bin/calgate.ts', import.meta.url));

const LETTA_KEY = 'sk-let-cli-target-key-42f1';
const ANN = 'agent-0a8b6f1e-3c55-4d5e-9a4e-1d2c3b4a5f60';
const MISSING = 'agent-00000000-0000-4000-8000-00000000dead';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

interface Run {
  code: number;
  out: string;
  err: string;
}

describe('calgate target', () => {
  let db: TestDatabase;
  let env: NodeJS.ProcessEnv;
  let letta: LettaEmulator;
  let hookUrl: string;
  let hookStatus = 204;
  const received: Received[] = [];
  let closeHook: () => Promise<void>;
  let tenantId: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    env = {
      DATABASE_URL: db.url,
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      TARGETS_ALLOW_PRIVATE: 'true',
    };
    letta = await startLettaEmulator({
      seed: { apiKeys: [LETTA_KEY], agents: [{ id: ANN, name: 'ann-assistant' }] },
    });
    const hook = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(hookStatus);
        res.end();
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hooks/calgate?token=q-s3cret`;
    closeHook = () =>
      new Promise<void>((resolve) => {
        hook.closeAllConnections();
        hook.close(() => resolve());
      });
    tenantId = (JSON.parse((await cli('tenant', 'create', '--name', 'Acme', '--json')).out) as { id: string })
      .id;
  });
  beforeEach(() => {
    received.length = 0;
    hookStatus = 204;
    letta.admin.reset();
  });
  afterAll(async () => {
    await closeHook();
    await letta.close();
    await db.close();
  });

  async function cli(...args: string[]): Promise<Run> {
    return cliWith(env, ...args);
  }

  async function cliWith(environment: NodeJS.ProcessEnv, ...args: string[]): Promise<Run> {
    let out = '';
    let err = '';
    const code = await main(args, environment, {
      out: (t) => (out += `${t}\n`),
      err: (t) => (err += `${t}\n`),
    });
    return { code, out, err };
  }

  async function json<T>(...args: string[]): Promise<T> {
    const result = await cli(...args, '--json');
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    return JSON.parse(result.out) as T;
  }

  const targetCount = async () =>
    (await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM delivery_targets')).rows[0]?.n;

  it('creates a webhook target, shows its secret once, lists its origin only, and tests it with a signed event', async () => {
    // A real process: stdout is exactly one JSON object with the id and the secret.
    const { stdout } = await run(
      process.execPath,
      [BIN, 'target', 'create', '--kind', 'webhook', '--name', 'Ops hook', '--url', hookUrl, '--json'],
      { env: { ...process.env, ...env } },
    );
    const created = JSON.parse(stdout) as { id: string; secret: string };
    expect(Object.keys(created).sort()).toEqual(['id', 'secret']);
    expect(created.id).toMatch(/^tgt_/);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const stored = await db.pool.query('SELECT sealed_secret, url FROM delivery_targets WHERE id = $1', [
      created.id,
    ]);
    expect(Buffer.from(stored.rows[0].sealed_secret).toString('latin1')).not.toContain(
      created.secret.slice(6),
    );

    const list = await json<Record<string, unknown>[]>('target', 'list');
    expect(list).toEqual([
      {
        id: created.id,
        kind: 'webhook',
        name: 'Ops hook',
        origin: new URL(hookUrl).origin,
        defaultAgentId: null,
        disabled: false,
        disabledAt: null,
        disabledReason: null,
        createdAt: expect.any(String),
      },
    ]);
    const human = await cli('target', 'list');
    for (const text of [JSON.stringify(list), human.out]) {
      expect(text).not.toMatch(/hooks\/calgate|q-s3cret|whsec_/);
    }
    expect(human.out).toContain(`${created.id}  webhook  Ops hook  ${new URL(hookUrl).origin}`);

    const tested = await json<{ targetId: string; ok: boolean; status: number; error: null }>(
      'target',
      'test',
      '--target',
      created.id,
    );
    expect(tested).toMatchObject({ targetId: created.id, ok: true, status: 204, error: null });
    expect(received).toHaveLength(1);
    const [request] = received;
    expect(request?.headers['webhook-id']).toMatch(/^test_/);
    expect(
      new Webhook(created.secret).verify(request?.body ?? '', request?.headers as Record<string, string>),
    ).toMatchObject({ type: 'target.test', targetId: created.id });

    hookStatus = 503;
    const failed = await cli('target', 'test', '--target', created.id, '--json');
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.out)).toMatchObject({ ok: false, status: 503 });
    expect(failed.err).toContain(`webhook target ${created.id} answered 503`);
    expect(failed.err + failed.out).not.toMatch(/q-s3cret|hooks\/calgate/);
    const humanFailed = await cli('target', 'test', '--target', created.id);
    expect(humanFailed.code).toBe(1);
    expect(humanFailed.out).toMatch(
      new RegExp(`^FAILED: ${created.id} by a signed target.test event, status 503`),
    );

    expect((await json('target', 'delete', '--target', created.id)) as unknown).toEqual({
      id: created.id,
      deleted: true,
    });
    const again = await cli('target', 'delete', '--target', created.id);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(`No delivery target ${created.id} in this tenant.`);
  });

  it('prints the id and the secret in the human output of create', async () => {
    const result = await cli('target', 'create', '--kind', 'webhook', '--name', 'Human', '--url', hookUrl);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(
      /^Created webhook target tgt_\w+ \(Human\)\.\nSigning secret \(shown only now\): whsec_\S+\n/,
    );
    const id = /tgt_\w+/.exec(result.out)?.[0] ?? '';
    await json('target', 'delete', '--target', id);
  });

  it('creates a Letta target, keeps its key sealed and tests it against the Letta API', async () => {
    const created = await json<Record<string, string>>(
      'target',
      'create',
      '--kind',
      'letta',
      '--name',
      'Letta',
      '--url',
      letta.url,
      '--api-key',
      LETTA_KEY,
      '--default-agent',
      ANN,
    );
    expect(Object.keys(created)).toEqual(['id']);
    const id = created.id ?? '';
    expect(id).toMatch(/^tgt_/);
    const row = await db.pool.query(
      'SELECT sealed_secret, default_agent_id FROM delivery_targets WHERE id = $1',
      [id],
    );
    expect(Buffer.from(row.rows[0].sealed_secret).toString('latin1')).not.toContain(LETTA_KEY);
    expect(row.rows[0].default_agent_id).toBe(ANN);

    const list = await json<{ id: string; kind: string; defaultAgentId: string }[]>('target', 'list');
    expect(list.find((t) => t.id === id)).toMatchObject({ kind: 'letta', defaultAgentId: ANN });
    expect(JSON.stringify(list)).not.toContain(LETTA_KEY);
    expect((await cli('target', 'list')).out).toContain(`default agent ${ANN}`);

    const tested = await json<{ ok: boolean; status: number }>('target', 'test', '--target', id);
    expect(tested).toMatchObject({ targetId: id, ok: true, status: 200, error: null });
    expect(letta.admin.requests().map((r) => [r.op, r.apiKey])).toEqual([['agents.list', LETTA_KEY]]);
    expect(letta.admin.messages()).toEqual([]);
    await json('target', 'delete', '--target', id);

    const missing = await json<{ id: string }>(
      'target',
      'create',
      '--kind',
      'letta',
      '--name',
      'Missing agent',
      '--url',
      letta.url,
      '--api-key',
      LETTA_KEY,
      '--default-agent',
      MISSING,
    );
    const noAgent = await cli('target', 'test', '--target', missing.id);
    expect(noAgent.code).toBe(1);
    expect(noAgent.err).toContain(`Letta agent ${MISSING}, the target's default agent, was not found`);
    await json('target', 'delete', '--target', missing.id);

    const wrongKey = await json<{ id: string }>(
      'target',
      'create',
      '--kind',
      'letta',
      '--name',
      'Wrong key',
      '--url',
      letta.url,
      '--api-key',
      'sk-let-not-a-real-key',
    );
    const refused = await cli('target', 'test', '--target', wrongKey.id, '--json');
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.out)).toMatchObject({ ok: false, status: 401 });
    expect(refused.err).toContain("the target's API key was refused");
    expect(refused.out + refused.err).not.toContain('sk-let-not-a-real-key');
    await json('target', 'delete', '--target', wrongKey.id);
  });

  it('refuses a loopback URL without TARGETS_ALLOW_PRIVATE, storing nothing', async () => {
    const strict = { ...env, TARGETS_ALLOW_PRIVATE: 'false' };
    const before = await targetCount();
    for (const url of [hookUrl, 'https://127.0.0.1:8443/hook', 'http://[::1]:9/hook']) {
      const result = await cliWith(
        strict,
        'target',
        'create',
        '--kind',
        'webhook',
        '--name',
        'Local',
        '--url',
        url,
      );
      expect(result.code, url).toBe(1);
      expect(result.err).toMatch(
        /^Cannot add this target: target URL address (127\.0\.0\.1|::1) is a loopback address; Calgate refuses private targets unless TARGETS_ALLOW_PRIVATE=true \(or OUTBOUND_ALLOW_PRIVATE=true\)\./,
      );
    }
    const lettaRefused = await cliWith(
      strict,
      'target',
      'create',
      '--kind',
      'letta',
      '--name',
      'Local Letta',
      '--url',
      letta.url,
      '--api-key',
      LETTA_KEY,
      '--json',
    );
    expect(lettaRefused.code).toBe(1);
    expect(JSON.parse(lettaRefused.err)).toEqual({ error: { message: expect.stringMatching(/loopback/) } });
    expect(lettaRefused.err).not.toContain(LETTA_KEY);
    const metadata = await cli(
      'target',
      'create',
      '--kind',
      'webhook',
      '--name',
      'Meta',
      '--url',
      'http://169.254.169.254/',
    );
    expect(metadata.code).toBe(1);
    expect(metadata.err).toMatch(/cloud metadata address/);
    const plain = await cliWith(
      strict,
      'target',
      'create',
      '--kind',
      'webhook',
      '--name',
      'Plain',
      '--url',
      'http://93.184.215.14/hook',
    );
    expect(plain.code).toBe(1);
    expect(plain.err).toMatch(/must use https/);
    expect(await targetCount()).toBe(before);

    // A stored target whose URL the policy now refuses fails its test the same way.
    const created = await json<{ id: string }>(
      'target',
      'create',
      '--kind',
      'webhook',
      '--name',
      'Later',
      '--url',
      hookUrl,
    );
    const tested = await cliWith(strict, 'target', 'test', '--target', created.id);
    expect(tested.code).toBe(1);
    expect(tested.err).toContain(
      `webhook target ${created.id} refused: target URL address 127.0.0.1 is a loopback address; Calgate refuses private targets unless TARGETS_ALLOW_PRIVATE=true (or OUTBOUND_ALLOW_PRIVATE=true)`,
    );
    expect(received).toEqual([]);
    await json('target', 'delete', '--target', created.id);
  });

  it('reports usage mistakes with exit 2 and changes nothing', async () => {
    const before = await targetCount();
    const mistakes: [string[], RegExp][] = [
      [['--kind', 'slack', '--name', 'X', '--url', hookUrl], /--kind must be webhook or letta, not 'slack'/],
      [['--name', 'X', '--url', hookUrl], /--kind is required: webhook or letta/],
      [['--kind', 'letta', '--name', 'X', '--url', letta.url], /--api-key is required/],
      [['--kind', 'webhook', '--name', 'X'], /--url is required/],
      [['--kind', 'webhook', '--url', hookUrl], /--name is required/],
      [['--kind', 'webhook', '--name', 'X', '--url', hookUrl, '--api-key', 'k'], /are for --kind letta/],
    ];
    for (const [flags, message] of mistakes) {
      const result = await cli('target', 'create', ...flags);
      expect(result.code, flags.join(' ')).toBe(2);
      expect(result.err).toMatch(message);
    }
    expect((await cli('target', 'test')).err).toMatch(/--target is required/);
    expect((await cli('target', 'enable', '--target', 'tgt_x')).code).toBe(2);
    const badUrl = await cli('target', 'create', '--kind', 'webhook', '--name', 'X', '--url', 'not a url');
    expect(badUrl.code).toBe(1);
    expect(badUrl.err).toMatch(/not a valid absolute URL/);
    expect(await targetCount()).toBe(before);
  });

  it('secrets reseal re-seals target secrets under a rotated master key; the old key is then not needed', async () => {
    const created = await json<{ id: string; secret: string }>(
      'target',
      'create',
      '--kind',
      'webhook',
      '--name',
      'Rotated hook',
      '--url',
      hookUrl,
      '--tenant',
      tenantId,
    );
    const rotated = {
      ...env,
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      ENCRYPTION_KEYS_PREVIOUS: String(env.ENCRYPTION_KEY),
    };
    const resealed = await cliWith(rotated, 'secrets', 'reseal', '--json');
    expect(resealed.code).toBe(0);
    const report = JSON.parse(resealed.out) as { resealed: number; unreadable: string[] };
    expect(report.unreadable).toEqual([]);
    expect(report.resealed).toBeGreaterThanOrEqual(1);
    const newOnly = { ...rotated, ENCRYPTION_KEYS_PREVIOUS: '' };
    received.length = 0;
    const tested = await cliWith(
      newOnly,
      'target',
      'test',
      '--target',
      created.id,
      '--tenant',
      tenantId,
      '--json',
    );
    expect(tested.code, tested.err).toBe(0);
    const [hit] = received;
    expect(() =>
      new Webhook(created.secret).verify(hit?.body ?? '', {
        'webhook-id': String(hit?.headers['webhook-id']),
        'webhook-timestamp': String(hit?.headers['webhook-timestamp']),
        'webhook-signature': String(hit?.headers['webhook-signature']),
      }),
    ).not.toThrow();
    // The old key alone can no longer open it.
    const oldOnly = await cliWith(
      env,
      'target',
      'test',
      '--target',
      created.id,
      '--tenant',
      tenantId,
      '--json',
    );
    expect(oldOnly.code).toBe(1);
    await cliWith(newOnly, 'target', 'delete', '--target', created.id, '--tenant', tenantId);
  });

  it('selects the tenant with --tenant once the first tenant has a namesake', async () => {
    const other = (
      JSON.parse((await cli('tenant', 'create', '--name', 'Acme', '--json')).out) as { id: string }
    ).id;
    const ambiguous = await cli('target', 'list');
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.err).toMatch(/Several tenants exist; pass --tenant/);

    const mine = await json<{ id: string }>(
      'target',
      'create',
      '--kind',
      'webhook',
      '--name',
      'Shared name',
      '--url',
      hookUrl,
      '--tenant',
      other,
    );
    const theirs = await json<{ id: string }>(
      'target',
      'create',
      '--kind',
      'webhook',
      '--name',
      'Shared name',
      '--url',
      hookUrl,
      '--tenant',
      tenantId,
    );
    expect((await json<{ id: string }[]>('target', 'list', '--tenant', other)).map((t) => t.id)).toEqual([
      mine.id,
    ]);
    expect((await json<{ id: string }[]>('target', 'list', '--tenant', tenantId)).map((t) => t.id)).toEqual([
      theirs.id,
    ]);
    const crossTenant = await cli('target', 'test', '--target', theirs.id, '--tenant', other);
    expect(crossTenant.code).toBe(1);
    expect(crossTenant.err).toMatch(`No delivery target ${theirs.id} in this tenant.`);
    const duplicate = await cli(
      'target',
      'create',
      '--kind',
      'webhook',
      '--name',
      'shared NAME',
      '--url',
      hookUrl,
      '--tenant',
      other,
    );
    expect(duplicate.code).toBe(1);
    expect(duplicate.err).toMatch(/already exists in this tenant/);
  });
});
