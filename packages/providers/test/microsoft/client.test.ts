import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CalgateError } from '@calgate/core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CredentialStore, OAuthCredentials } from '../../src/google/credentials.ts';
import { GraphClient, type GraphClientOptions, graphPath } from '../../src/microsoft/client.ts';
import { MailboxLimiter, MailboxLimiters } from '../../src/microsoft/limiter.ts';
import { MicrosoftTokenSource, microsoftTokenUrl } from '../../src/microsoft/token.ts';

/** One request the loopback server saw. */
interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

type Handler = (request: Seen, response: ServerResponse) => void | Promise<void>;

let server: Server;
let origin: string;
let handler: Handler;
const seen: Seen[] = [];
let inFlight = 0;
let maxInFlight = 0;

function json(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: Seen = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      seen.push(request);
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      res.on('close', () => {
        inFlight -= 1;
      });
      Promise.resolve(handler(request, res)).catch((error: unknown) => {
        res.writeHead(500);
        res.end(String(error));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  seen.length = 0;
  inFlight = 0;
  maxInFlight = 0;
});

/** A credential store in memory that records what it is told. */
class MemoryStore implements CredentialStore {
  credentials: OAuthCredentials;
  saves: OAuthCredentials[] = [];
  reauth: string[] = [];
  constructor(refreshToken: string) {
    this.credentials = { refreshToken };
  }
  async load(): Promise<OAuthCredentials> {
    return { ...this.credentials };
  }
  async save(credentials: OAuthCredentials): Promise<void> {
    this.saves.push({ ...credentials });
    this.credentials = { ...credentials };
  }
  async markNeedsReauth(reason: string): Promise<void> {
    this.reauth.push(reason);
  }
}

/** A token source that hands out fixed tokens in turn and records invalidations. */
function fixedTokens(...tokens: string[]) {
  const invalidated: string[] = [];
  let index = 0;
  return {
    invalidated,
    source: {
      token: async () => tokens[Math.min(index, tokens.length - 1)] as string,
      invalidate: (token: string) => {
        invalidated.push(token);
        index += 1;
      },
    },
  };
}

const slept: number[] = [];

function client(options: Partial<GraphClientOptions> = {}): GraphClient {
  return new GraphClient({
    graphUrl: `${origin}/v1.0`,
    tokens: fixedTokens('token-1').source,
    limiter: new MailboxLimiter(),
    sleep: async (ms) => {
      slept.push(ms);
    },
    random: () => 0.5,
    ...options,
  });
}

async function rejection(promise: Promise<unknown>): Promise<CalgateError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof CalgateError) {
      return error;
    }
    throw error;
  }
  throw new Error('expected a failure');
}

describe('URLs', () => {
  it('append to the versioned root, never replacing its path, and encode ids and query values', async () => {
    handler = (_request, response) => json(response, 200, { id: 'x' });
    const graph = client();
    await graph.request({ path: '/me', operation: 'me.get' });
    const id = 'AAMkAD+/abc==';
    await graph.request({
      path: graphPath`/me/calendars/${id}/calendarView`,
      query: { startDateTime: '2026-03-29T00:00:00+02:00', endDateTime: '2026-03-30T00:00:00Z', $top: 50 },
      operation: 'events.list',
    });
    expect(seen.map((s) => s.url)).toEqual([
      '/v1.0/me',
      '/v1.0/me/calendars/AAMkAD%2B%2Fabc%3D%3D/calendarView?startDateTime=2026-03-29T00%3A00%3A00%2B02%3A00&endDateTime=2026-03-30T00%3A00%3A00Z&$top=50',
    ]);
    expect(client({ graphUrl: `${origin}/v1.0/` }).url('/me/events')).toBe(`${origin}/v1.0/me/events`);
  });
});

describe('paging', () => {
  it('follows absolute nextLinks as given, resending Authorization and Prefer, through short pages', async () => {
    handler = (request, response) => {
      const url = new URL(request.url, origin);
      const skip = url.searchParams.get('$skiptoken');
      if (skip === null) {
        json(response, 200, {
          value: [{ id: 'a' }, { id: 'b' }],
          '@odata.nextLink': `${origin}/v1.0/me/calendars?$top=5&$skiptoken=page2`,
        });
      } else if (skip === 'page2') {
        json(response, 200, {
          value: [{ id: 'c' }],
          '@odata.nextLink': `${origin}/v1.0/me/calendars?$top=5&$skiptoken=page3`,
        });
      } else {
        json(response, 200, {
          value: [{ id: 'd' }],
          '@odata.deltaLink': `${origin}/v1.0/me/calendars/delta?$deltatoken=z`,
        });
      }
    };
    const graph = client();
    const prefer = ['outlook.timezone="UTC"', 'outlook.body-content-type="text"'];
    const items = await graph.all<{ id: string }>({
      path: '/me/calendars',
      query: { $top: 5 },
      prefer,
      operation: 'calendars.list',
    });
    expect(items.map((item) => item.id)).toEqual(['a', 'b', 'c', 'd']);
    expect(seen.map((s) => s.url)).toEqual([
      '/v1.0/me/calendars?$top=5',
      '/v1.0/me/calendars?$top=5&$skiptoken=page2',
      '/v1.0/me/calendars?$top=5&$skiptoken=page3',
    ]);
    for (const request of seen) {
      expect(request.headers.authorization).toBe('Bearer token-1');
      expect(request.headers.prefer).toBe('outlook.timezone="UTC", outlook.body-content-type="text"');
    }
    const last = await graph.page(
      { path: '/me/calendars', operation: 'calendars.list' },
      `${origin}/v1.0/me/calendars?$skiptoken=page3`,
    );
    expect(last).toEqual({
      value: [{ id: 'd' }],
      deltaLink: `${origin}/v1.0/me/calendars/delta?$deltatoken=z`,
    });
  });

  it('refuses a nextLink to another host without sending the token there', async () => {
    handler = (_request, response) =>
      json(response, 200, {
        value: [{ id: 'a' }],
        '@odata.nextLink': 'http://attacker.invalid/v1.0/me/calendars?$skiptoken=x',
      });
    const error = await rejection(client().all({ path: '/me/calendars', operation: 'calendars.list' }));
    expect(error.code).toBe('upstream_unavailable');
    expect(error.message).toMatch(/next link to another host \(attacker\.invalid\)/);
    expect(seen).toHaveLength(1);
  });
});

describe('at most 4 requests in flight per mailbox', () => {
  it('holds the fifth request of a mailbox until one ends, across clients of that mailbox', async () => {
    handler = async (_request, response) => {
      await new Promise((resolve) => setTimeout(resolve, 40));
      json(response, 200, { ok: true });
    };
    const limiters = new MailboxLimiters();
    const a = client({ limiter: limiters.for('con_1') });
    const b = client({ limiter: limiters.for('con_1') });
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (i % 2 === 0 ? a : b).request({ path: `/me/events/${i}`, operation: 'events.get' }),
      ),
    );
    expect(seen).toHaveLength(12);
    expect(maxInFlight).toBe(4);
    // Another mailbox has its own four.
    maxInFlight = 0;
    const c = client({ limiter: limiters.for('con_2') });
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        (i % 2 === 0 ? a : c).request({ path: `/me/events/${i}`, operation: 'events.get' }),
      ),
    );
    expect(maxInFlight).toBe(8);
  });

  it('lets a caller that gives up while waiting leave the queue', async () => {
    const limiter = new MailboxLimiter(1);
    let release = () => {};
    const first = limiter.run(
      () =>
        new Promise<void>((resolve) => {
          release = resolve;
        }),
    );
    const controller = new AbortController();
    const second = limiter.run(async () => 'ran', controller.signal);
    expect(limiter.waiting).toBe(1);
    controller.abort(new Error('gave up'));
    await expect(second).rejects.toThrow('gave up');
    expect(limiter.waiting).toBe(0);
    release();
    await first;
    expect(limiter.active).toBe(0);
  });
});

describe('10,000 requests per 10 minutes per mailbox (this process)', () => {
  beforeEach(() => {
    slept.length = 0;
  });

  it('spends the budget per attempt, waits when it frees within a Retry-After it would wait, else refuses naming when', async () => {
    handler = (_request, response) => json(response, 200, { ok: true });
    let now = Date.UTC(2026, 10, 2, 9, 0, 0);
    const clock = () => now;
    const limiter = new MailboxLimiter(4, { budget: { limit: 3, windowMs: 600_000 }, now: clock });
    // The client's sleep moves the clock, as the waiting would.
    const graph = client({
      limiter,
      now: clock,
      sleep: async (ms) => {
        slept.push(ms);
        now += ms;
      },
    });
    for (let i = 0; i < 3; i++) {
      await graph.request({ path: `/me/events/e${i}`, operation: 'events.get' });
    }
    expect(seen).toHaveLength(3);
    // Spent: the window frees 10 min (and at most one 10 s slice) after the first request.
    const refused = await rejection(graph.request({ path: '/me/events/e4', operation: 'events.get' }));
    expect(refused.code).toBe('rate_limited');
    expect(refused.retry).toBe(true);
    expect(refused.retryAfterMs).toBe(610_000);
    expect(refused.message).toBe(
      "Microsoft 365 allows 3 requests per mailbox every 10 minutes, and this account's are spent; nothing was sent to Microsoft. Try again in 10 min 10 s (at 2026-11-02T09:10:10Z).",
    );
    expect(seen).toHaveLength(3);
    expect(slept).toEqual([]);
    // 5 s before it frees, the client waits those 5 s (as for a Retry-After of 5 s) and goes on.
    now += 605_000;
    await graph.request({ path: '/me/events/e5', operation: 'events.get' });
    expect(slept).toEqual([5000]);
    expect(seen).toHaveLength(4);
  });

  it('counts every mailbox apart', async () => {
    handler = (_request, response) => json(response, 200, { ok: true });
    const limiters = new MailboxLimiters(4, { budget: { limit: 1, windowMs: 600_000 } });
    await client({ limiter: limiters.for('con_1') }).request({ path: '/me', operation: 'me.get' });
    await client({ limiter: limiters.for('con_2') }).request({ path: '/me', operation: 'me.get' });
    const refused = await rejection(
      client({ limiter: limiters.for('con_1') }).request({ path: '/me', operation: 'me.get' }),
    );
    expect(refused.code).toBe('rate_limited');
    expect(seen).toHaveLength(2);
  });
});

describe('throttling and faults', () => {
  beforeEach(() => {
    slept.length = 0;
  });

  it('waits out Retry-After on 429 and 503, then succeeds', async () => {
    let calls = 0;
    handler = (_request, response) => {
      calls += 1;
      if (calls === 1) {
        json(
          response,
          429,
          { error: { code: 'ApplicationThrottled', message: 'Too many requests' } },
          { 'retry-after': '2' },
        );
      } else if (calls === 2) {
        json(
          response,
          503,
          { error: { code: 'ServiceUnavailable', message: 'Try later' } },
          { 'retry-after': '1' },
        );
      } else {
        json(response, 200, { id: 'me' });
      }
    };
    expect(await client().request({ path: '/me', operation: 'me.get' })).toEqual({ id: 'me' });
    expect(slept).toEqual([2000, 1000]);
  });

  it('gives up at once when Retry-After is longer than it waits, saying when to come back', async () => {
    handler = (_request, response) =>
      json(
        response,
        429,
        { error: { code: 'ApplicationThrottled', message: 'Too many requests' } },
        { 'retry-after': '120' },
      );
    const error = await rejection(client().request({ path: '/me/events', operation: 'events.list' }));
    expect(error.code).toBe('rate_limited');
    expect(error.retryAfterMs).toBe(120_000);
    expect(error.message).toMatch(/Microsoft asked to wait 120 s/);
    expect(slept).toEqual([]);
    expect(seen).toHaveLength(1);
  });

  it('backs off on 5xx and gives up after its attempts as upstream_unavailable', async () => {
    handler = (_request, response) =>
      json(response, 500, { error: { code: 'generalException', message: 'Boom' } });
    const error = await rejection(
      client({ retry: { maxAttempts: 3 } }).request({ path: '/me', operation: 'me.get' }),
    );
    expect(error.code).toBe('upstream_unavailable');
    expect(error.message).toMatch(/^Microsoft Graph is unavailable \(HTTP 500: Boom\) \(3 attempts over/);
    expect(seen).toHaveLength(3);
    expect(slept).toEqual([100, 200]);
  });

  it('reports a server that does not answer', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await rejection(
      client({ graphUrl: `http://127.0.0.1:${port}/v1.0`, retry: { maxAttempts: 2 } }).request({
        path: '/me',
        operation: 'me.get',
      }),
    );
    expect(error.code).toBe('upstream_unavailable');
    expect(error.message).toMatch(/could not be reached: no answer \(ECONNREFUSED\)/);
  });

  const mapped: [number, unknown, string, RegExp][] = [
    [
      404,
      { error: { code: 'ErrorItemNotFound', message: 'The specified object was not found in the store.' } },
      'not_found',
      /^Event 'evt-1' was not found in Microsoft 365\.$/,
    ],
    [
      412,
      {
        error: {
          code: 'ErrorIrresolvableConflict',
          message: 'The change key passed in the request does not match',
        },
      },
      'precondition_failed',
      /changed in Microsoft 365 since it was read \(ETag mismatch\)/,
    ],
    [
      409,
      { error: { code: 'ErrorIrresolvableConflict', message: 'conflict' } },
      'precondition_failed',
      /changed in Microsoft 365 while it was being written/,
    ],
    [
      403,
      { error: { code: 'ErrorAccessDenied', message: 'Access is denied. Check credentials and try again.' } },
      'permission_denied',
      /^Microsoft refused the change \(Access is denied/,
    ],
    [
      400,
      { error: { code: 'ErrorInvalidRequest', message: 'Your request is invalid.' } },
      'invalid_argument',
      /^Microsoft Graph rejected the request: Your request is invalid\.$/,
    ],
    [
      410,
      { error: { code: 'SyncStateNotFound', message: 'The sync state is not found.' } },
      'precondition_failed',
      /a full sync is required/,
    ],
  ];
  for (const [status, body, code, message] of mapped) {
    it(`maps HTTP ${status} to ${code}`, async () => {
      handler = (_request, response) => json(response, status, body);
      const error = await rejection(
        client().request({
          method: 'PATCH',
          path: '/me/events/evt-1',
          body: { subject: 'x' },
          ifMatch: 'W/"ck"',
          operation: 'events.patch',
          eventId: 'evt-1',
        }),
      );
      expect(error.code).toBe(code);
      expect(error.message).toMatch(message);
      expect(seen).toHaveLength(1);
      expect(error.context).toMatchObject({ status, operation: 'events.patch' });
      if (status === 410) {
        expect(error.context.fullSyncRequired).toBe(true);
      }
    });
  }

  it('says how to allow writing when Graph refuses a write (a read-only connection)', async () => {
    handler = (_request, response) =>
      json(response, 403, {
        error: { code: 'ErrorAccessDenied', message: 'Access is denied. Check credentials and try again.' },
      });
    const write = await rejection(
      client().request({
        method: 'POST',
        path: '/me/calendars/c1/events',
        body: {},
        operation: 'events.insert',
        calendarId: 'c1',
      }),
    );
    expect(write.code).toBe('permission_denied');
    expect(write.message).toBe(
      'Microsoft refused the change (Access is denied. Check credentials and try again.); if this account was connected read-only, allow writing on the Accounts page.',
    );
    expect(write.context.readOnlyConnection).toBe(true);
    const read = await rejection(client().request({ path: '/me/calendars/c1', operation: 'calendars.get' }));
    expect(read.context.readOnlyConnection).toBeUndefined();
  });

  it('stops when the caller gives up, also while waiting out Retry-After', async () => {
    handler = (_request, response) =>
      json(
        response,
        429,
        { error: { code: 'ApplicationThrottled', message: 'Too many requests' } },
        { 'retry-after': '5' },
      );
    const controller = new AbortController();
    const graph = client({ sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) });
    const call = graph.request({ path: '/me', operation: 'me.get', signal: controller.signal });
    setTimeout(() => controller.abort(new Error('caller left')), 100);
    await expect(call).rejects.toThrow('caller left');
    expect(seen).toHaveLength(1);
  });

  it('sends JSON bodies and If-Match, and reads 204 as nothing', async () => {
    handler = (request, response) => {
      if (request.method === 'DELETE') {
        response.writeHead(204);
        response.end();
      } else {
        json(response, 201, { id: 'new', ...JSON.parse(request.body) });
      }
    };
    const graph = client();
    expect(
      await graph.request({
        method: 'POST',
        path: '/me/calendars/c1/events',
        body: { subject: 'Hi', transactionId: 't1' },
        operation: 'events.insert',
      }),
    ).toEqual({ id: 'new', subject: 'Hi', transactionId: 't1' });
    expect(seen[0]?.headers['content-type']).toBe('application/json');
    expect(
      await graph.request({
        method: 'DELETE',
        path: '/me/events/e1',
        ifMatch: 'W/"ck1"',
        operation: 'events.delete',
      }),
    ).toBeUndefined();
    expect(seen[1]?.headers['if-match']).toBe('W/"ck1"');
  });
});

describe('tokens', () => {
  const config = () => ({
    clientId: 'client-1',
    clientSecret: 'secret-1',
    tenant: 'tenant-x',
    loginUrl: `${origin}/login/`,
  });
  const clock = { now: () => Date.now(), requestTimeoutMs: 5000 };

  it('refreshes at the tenant token endpoint, storing every new refresh token at once', async () => {
    let issued = 0;
    handler = (request, response) => {
      if (request.url === '/login/tenant-x/oauth2/v2.0/token') {
        issued += 1;
        json(response, 200, {
          token_type: 'Bearer',
          access_token: `access-${issued}`,
          refresh_token: `refresh-${issued + 1}`,
          expires_in: issued === 1 ? 30 : 3600,
          scope: 'https://graph.microsoft.com/Calendars.ReadWrite https://graph.microsoft.com/User.Read',
        });
        return;
      }
      json(response, 200, { auth: request.headers.authorization });
    };
    expect(microsoftTokenUrl(config())).toBe(`${origin}/login/tenant-x/oauth2/v2.0/token`);
    const store = new MemoryStore('refresh-1');
    const tokens = new MicrosoftTokenSource(config(), store, clock);
    const graph = client({ tokens });
    // Concurrent calls refresh once.
    const answers = await Promise.all(
      [1, 2, 3].map(() => graph.request<{ auth: string }>({ path: '/me', operation: 'me.get' })),
    );
    expect(answers.map((a) => a.auth)).toEqual(['Bearer access-1', 'Bearer access-1', 'Bearer access-1']);
    const refreshes = seen.filter((s) => s.url.startsWith('/login/'));
    expect(refreshes).toHaveLength(1);
    const form = new URLSearchParams(refreshes[0]?.body);
    expect(Object.fromEntries(form)).toEqual({
      client_id: 'client-1',
      client_secret: 'secret-1',
      grant_type: 'refresh_token',
      refresh_token: 'refresh-1',
    });
    expect(store.saves.map((s) => s.refreshToken)).toEqual(['refresh-2']);
    expect(store.saves[0]?.accessToken).toBe('access-1');
    // The first token expires within the skew: the next call refreshes with the stored new refresh token.
    await graph.request({ path: '/me', operation: 'me.get' });
    const second = new URLSearchParams(seen.filter((s) => s.url.startsWith('/login/'))[1]?.body);
    expect(second.get('refresh_token')).toBe('refresh-2');
    expect(second.get('scope')).toBe(
      'https://graph.microsoft.com/Calendars.ReadWrite https://graph.microsoft.com/User.Read offline_access',
    );
    expect(store.saves.map((s) => s.refreshToken)).toEqual(['refresh-2', 'refresh-3']);
  });

  it('refreshes once on 401 InvalidAuthenticationToken and retries with the new token', async () => {
    let refreshes = 0;
    handler = (request, response) => {
      if (request.url.startsWith('/login/')) {
        refreshes += 1;
        json(response, 200, {
          access_token: `access-${refreshes}`,
          refresh_token: `refresh-${refreshes + 1}`,
          expires_in: 3600,
        });
      } else if (request.headers.authorization === 'Bearer access-1') {
        json(response, 401, {
          error: {
            code: 'InvalidAuthenticationToken',
            message: 'Access token has expired or is not yet valid.',
          },
        });
      } else {
        json(response, 200, { auth: request.headers.authorization });
      }
    };
    const store = new MemoryStore('refresh-1');
    const graph = client({ tokens: new MicrosoftTokenSource(config(), store, clock) });
    expect(await graph.request({ path: '/me', operation: 'me.get' })).toEqual({ auth: 'Bearer access-2' });
    expect(refreshes).toBe(2);
    expect(store.saves.map((s) => s.refreshToken)).toEqual(['refresh-2', 'refresh-3']);
  });

  it('asks for reconnection when a refreshed token is refused too', async () => {
    handler = (_request, response) =>
      json(response, 401, {
        error: { code: 'InvalidAuthenticationToken', message: 'Access token validation failure.' },
      });
    const tokens = fixedTokens('token-1', 'token-2');
    const error = await rejection(
      client({ tokens: tokens.source }).request({ path: '/me', operation: 'me.get' }),
    );
    expect(error.code).toBe('needs_reauth');
    expect(error.message).toMatch(/even after a token refresh; reconnect this account/);
    expect(tokens.invalidated).toEqual(['token-1']);
    expect(seen.map((s) => s.headers.authorization)).toEqual(['Bearer token-1', 'Bearer token-2']);
  });

  it('uses a refresh token another process rotated (sharing the store) instead of reporting needs_reauth', async () => {
    // Microsoft retires a refresh token once used; two processes share the connection's store.
    let current = 'refresh-1';
    let issued = 0;
    const refused = new Set<string>();
    handler = (request, response) => {
      if (request.url.startsWith('/login/')) {
        const given = new URLSearchParams(String(request.body)).get('refresh_token');
        if (given !== current) {
          json(response, 400, { error: 'invalid_grant', error_description: 'AADSTS70008: expired' });
          return;
        }
        issued += 1;
        current = `refresh-${issued + 1}`;
        json(response, 200, { access_token: `access-${issued}`, refresh_token: current, expires_in: 3600 });
      } else if (refused.has(String(request.headers.authorization))) {
        json(response, 401, { error: { code: 'InvalidAuthenticationToken', message: 'expired' } });
      } else {
        json(response, 200, { auth: request.headers.authorization });
      }
    };
    const store = new MemoryStore('refresh-1');
    const gateway = client({ tokens: new MicrosoftTokenSource(config(), store, clock) });
    const worker = client({ tokens: new MicrosoftTokenSource(config(), store, clock) });
    const me = { path: '/me', operation: 'me.get' } as const;
    expect(await gateway.request(me)).toEqual({ auth: 'Bearer access-1' });
    // The worker finds the gateway's token in the store: no second refresh.
    expect(await worker.request(me)).toEqual({ auth: 'Bearer access-1' });
    expect(issued).toBe(1);
    refused.add('Bearer access-1');
    // The gateway refreshes (refresh-2 retired, refresh-3 stored); the worker, refused too,
    // takes what the gateway stored rather than spending the retired refresh-2.
    expect(await gateway.request(me)).toEqual({ auth: 'Bearer access-2' });
    expect(await worker.request(me)).toEqual({ auth: 'Bearer access-2' });
    expect(issued).toBe(2);
    expect(store.reauth).toEqual([]);
    expect(store.credentials.refreshToken).toBe('refresh-3');
  });

  it('marks the connection needs_reauth on invalid_grant, without calling Graph', async () => {
    handler = (request, response) => {
      if (request.url.startsWith('/login/')) {
        json(response, 400, {
          error: 'invalid_grant',
          error_description:
            'AADSTS70000: The user or administrator has not consented.\r\nTrace ID: 1\r\nCorrelation ID: 2',
          error_codes: [70000],
        });
      } else {
        json(response, 200, {});
      }
    };
    const store = new MemoryStore('refresh-revoked');
    const error = await rejection(
      client({ tokens: new MicrosoftTokenSource(config(), store, clock) }).request({
        path: '/me',
        operation: 'me.get',
      }),
    );
    expect(error.code).toBe('needs_reauth');
    expect(error.message).toBe(
      "Microsoft no longer accepts this account's authorization (invalid_grant); reconnect this account.",
    );
    expect(store.reauth).toEqual(['Microsoft answered invalid_grant to a token refresh']);
    expect(store.saves).toEqual([]);
    expect(seen.filter((s) => !s.url.startsWith('/login/'))).toEqual([]);
    expect(JSON.stringify(error)).not.toContain('refresh-revoked');
  });

  it('reports a misconfigured app registration as such', async () => {
    handler = (_request, response) =>
      json(response, 401, {
        error: 'invalid_client',
        error_description: 'AADSTS7000215: Invalid client secret provided.',
      });
    const error = await rejection(
      client({ tokens: new MicrosoftTokenSource(config(), new MemoryStore('r'), clock) }).request({
        path: '/me',
        operation: 'me.get',
      }),
    );
    expect(error.code).toBe('unavailable');
    expect(error.message).toMatch(/check MICROSOFT_CLIENT_ID, MICROSOFT_CLIENT_SECRET and MICROSOFT_TENANT/);
  });
});
