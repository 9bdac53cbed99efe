import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrapFirstRun, type FirstRun, welcomeText } from '../src/bootstrap.ts';
import { KEY_PLACEHOLDER } from '../src/client-configs.ts';
import { canonicalPageUrl } from '../src/http/static.ts';
import { type Browser, call, uniqueEmail } from './api-client.ts';
import { startTestGateway, type TestGateway } from './harness.ts';

const PASSWORD = 'correct horse battery staple';
const CLOSED =
  'Sign-up is closed: this Calgate already has an owner. To join, ask an owner or admin for an invitation link.';

async function count(gw: TestGateway, table: 'users' | 'tenants'): Promise<number> {
  const { rows } = await gw.db.pool.query(`SELECT count(*)::int AS n FROM ${table}`);
  return rows[0].n;
}

function cookieOf(headers: Headers): string {
  return (headers.get('set-cookie') ?? '').split(';')[0] as string;
}

/** The install `npm start` leaves behind, then the dashboard's create-owner form over the API. */
describe('the create-owner form of a fresh install', () => {
  let gw: TestGateway;
  let firstRun: FirstRun;
  let owner: Browser;

  beforeAll(async () => {
    gw = await startTestGateway();
    const made = await bootstrapFirstRun(gw.runtime);
    if (made === undefined) {
      throw new Error('the test database already had a tenant');
    }
    firstRun = made;
  });

  afterAll(async () => {
    await gw?.stop();
  });

  it('.security: refuses a sign-up without Calgate’s Origin and creates nothing', async () => {
    const body = { email: uniqueEmail('owner'), password: PASSWORD, timeZone: 'Europe/Berlin' };
    const foreign = await call(gw, 'POST', '/api/v1/auth/signup', {
      body,
      headers: { origin: 'https://evil.example' },
    });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.message).toContain('https://evil.example');
    const response = await fetch(`${gw.url}/api/v1/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(403);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain(
      'sent no Origin header',
    );
    expect(response.headers.get('set-cookie')).toBeNull();
    expect(await count(gw, 'users')).toBe(0);
    expect((await call(gw, 'GET', '/api/v1/auth/first-run')).body).toEqual({ firstRun: true });
  });

  it('.error: holds the owner’s password to the rules every password follows', async () => {
    const short = await call(gw, 'POST', '/api/v1/auth/signup', {
      body: { email: uniqueEmail('owner'), password: 'eleven char' },
    });
    expect(short.status).toBe(400);
    expect(short.body.error.message).toContain('password: use a password of at least 12 characters');
    expect(await count(gw, 'users')).toBe(0);
  });

  it('.happy: two simultaneous first submissions make one owner; the other is told sign-up is closed', async () => {
    const email = uniqueEmail('owner');
    // The same person's form sent twice, and someone else's at the same moment.
    const bodies = [
      { email, password: PASSWORD, tenantName: 'Home', timeZone: 'Europe/Berlin' },
      { email, password: PASSWORD, tenantName: 'Home', timeZone: 'Europe/Berlin' },
      { email: uniqueEmail('other'), password: PASSWORD, tenantName: 'Theirs', timeZone: 'Asia/Tokyo' },
    ];
    const answers = await Promise.all(
      bodies.map((body) => call(gw, 'POST', '/api/v1/auth/signup', { body })),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 403, 403]);
    for (const refused of answers.filter((answer) => answer.status === 403)) {
      expect(refused.body.error).toMatchObject({ code: 'permission_denied', message: CLOSED });
      expect(refused.headers.get('set-cookie')).toBeNull();
    }
    const created = answers.find((answer) => answer.status === 201);
    if (created === undefined) {
      throw new Error('no sign-up succeeded');
    }
    owner = {
      cookie: cookieOf(created.headers),
      csrf: created.body.csrfToken,
      tenantId: created.body.tenant.id,
      userId: created.body.user.id,
    };
    // It adopted the first run's tenant: still one, with the winner's name and zone.
    expect(owner.tenantId).toBe(firstRun.tenantId);
    expect(await count(gw, 'users')).toBe(1);
    expect(await count(gw, 'tenants')).toBe(1);
    const { rows } = await gw.db.pool.query('SELECT email FROM users');
    const winner = bodies.find((body) => body.email === rows[0].email);
    expect(created.body.tenant.name).toBe(winner?.tenantName);
    expect((await call(gw, 'GET', '/api/v1/auth/first-run')).body).toEqual({ firstRun: false });

    // The form is gone for good: a later attempt gets the same answer.
    const late = await call(gw, 'POST', '/api/v1/auth/signup', {
      body: { email: uniqueEmail('late'), password: PASSWORD },
    });
    expect(late.status).toBe(403);
    expect(late.body.error.message).toBe(CLOSED);
  });

  it('.happy: the Overview’s configurations are the blocks the first start printed, with the placeholder for the key', async () => {
    const overview = await call(gw, 'GET', '/api/v1/overview', { as: owner });
    expect(overview.status).toBe(200);
    const clients = overview.body.clients as { client: string; label: string; text: string }[];
    expect(clients.map((client) => client.label)).toEqual([
      'Claude Code',
      'Claude Desktop',
      'Cursor',
      'Claude.ai connector',
      'ChatGPT connector',
    ]);
    // npm start prints for PUBLIC_URL, as the Overview shows.
    expect(overview.body.mcpUrl).toBe('http://calgate.test/api/mcp');
    const printed = welcomeText(overview.body.mcpUrl, firstRun);
    // Every block, in this order, each under its label, as printed.
    const blocks = clients
      .map(({ label, text }) => `\n${label}:\n${text.replaceAll(KEY_PLACEHOLDER, firstRun.secret)}\n`)
      .join('');
    expect(printed).toContain(blocks);
    for (const { client, text } of clients) {
      expect(text, client).not.toContain(firstRun.secret);
    }
    expect(clients.filter(({ text }) => text.includes(KEY_PLACEHOLDER)).map(({ client }) => client)).toEqual([
      'claudeCode',
      'claudeDesktop',
      'cursor',
    ]);
    expect(printed).toContain(`"Authorization": "Bearer ${firstRun.secret}"`);
  });
});

describe('canonicalPageUrl: a dashboard page under another loopback name of the same gateway', () => {
  const own = 'http://127.0.0.1:8787';

  it('sends localhost and [::1] on the same port to PUBLIC_URL, path and query kept', () => {
    expect(canonicalPageUrl(own, 'localhost:8787', '/accounts?x=1')).toBe(
      'http://127.0.0.1:8787/accounts?x=1',
    );
    expect(canonicalPageUrl(own, '[::1]:8787', '/')).toBe('http://127.0.0.1:8787/');
  });

  it('leaves the page where it is when it is already there, on another port, or not on this machine', () => {
    expect(canonicalPageUrl(own, '127.0.0.1:8787', '/')).toBeUndefined();
    expect(canonicalPageUrl(own, 'localhost:9999', '/')).toBeUndefined();
    expect(canonicalPageUrl(own, 'evil.example:8787', '/')).toBeUndefined();
    expect(canonicalPageUrl(own, 'localhost:8787@evil.example', '/')).toBeUndefined();
    expect(canonicalPageUrl(own, undefined, '/')).toBeUndefined();
    expect(canonicalPageUrl('https://calgate.example', 'localhost', '/')).toBeUndefined();
  });
});
