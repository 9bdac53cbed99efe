import { describe, expect, it } from 'vitest';
import {
  type BaseLogEntry,
  createPipeline,
  FaultTable,
  faultAdmin,
  faultAdminRoutes,
  type KitRoute,
  listen,
  opsMatch,
  type Reply,
  Router,
  readText,
  send,
} from '../src/index.ts';

interface Ctx {
  body: Record<string, unknown>;
  query: URLSearchParams;
  params: Record<string, string>;
}
type Match = { op?: string | string[] };

/** A toy emulator: one counter that POST /count increments, on the kit. */
async function toy() {
  let count = 0;
  const log: BaseLogEntry[] = [];
  const faults = new FaultTable<Match, BaseLogEntry, { text?: string }>(
    (m, f) => m === undefined || opsMatch(m.op, f.op),
  );
  const admin = faultAdmin({ faults, log, facts: (e: BaseLogEntry) => e, strict: true });
  const router = new Router<KitRoute<Ctx>>();
  router.add([
    {
      method: 'POST',
      pattern: '/count',
      op: 'count.add',
      handler: () => ({ status: 200, body: { count: ++count } }),
    },
    {
      method: 'GET',
      pattern: '/count/:name',
      op: 'count.get',
      handler: (ctx) => ({ status: 200, body: { name: ctx.params.name, count } }),
    },
    ...faultAdminRoutes<Match, { text?: string }, BaseLogEntry, Ctx>(admin),
  ]);
  const server = await listen((closing) =>
    createPipeline<KitRoute<Ctx>, BaseLogEntry, Record<string, unknown>, { text?: string }>({
      router,
      log,
      closing,
      entry: ({ method, path, match }) => ({
        at: Date.now(),
        method,
        path,
        op: match && match !== 'wrongMethod' ? match.route.op : 'unknown',
        status: 0,
      }),
      unrouted: ({ match }) => ({
        reply: { status: match === null ? 404 : 405, body: { error: 'no' } },
        log: match === null,
      }),
      readBody: async (req) => {
        const text = await readText(req, 1000, () => new Error('too large'));
        return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
      },
      emptyBody: () => ({}),
      decide: (entry, route) => (route.op.startsWith('admin.') ? undefined : faults.decide(entry)),
      faultReply: (action): Reply => ({
        status: action.status,
        body: { error: action.text ?? 'injected' },
        headers:
          action.retryAfterSeconds === undefined ? {} : { 'retry-after': String(action.retryAfterSeconds) },
      }),
      handle: ({ route, url, params, body }) => route.handler({ body, query: url.searchParams, params }),
      errorReply: (error) => ({ status: 500, body: { error: String(error) } }),
      send: (res, reply) => send(res, reply),
    }),
  );
  return { server, admin, log, count: () => count };
}

describe('the kit pipeline over HTTP', () => {
  it('routes, logs, and tells no route (logged here) from a wrong method (not logged)', async () => {
    const { server, log } = await toy();
    try {
      expect(await (await fetch(`${server.url}/count`, { method: 'POST' })).json()).toEqual({ count: 1 });
      expect(await (await fetch(`${server.url}/count/a%20b`)).json()).toEqual({ name: 'a b', count: 1 });
      expect((await fetch(`${server.url}/nothing`)).status).toBe(404);
      expect((await fetch(`${server.url}/count`)).status).toBe(405);
      expect(log.map((e) => [e.op, e.status])).toEqual([
        ['count.add', 200],
        ['count.get', 200],
        ['unknown', 404],
      ]);
    } finally {
      await server.close();
    }
  });

  it('injects errors with Retry-After, drops responses after the work is done, and scripts over HTTP', async () => {
    const { server, admin, count } = await toy();
    try {
      admin.fail({ op: 'count.*' }, { kind: 'error', status: 503, retryAfterSeconds: 4, text: 'busy' });
      const failed = await fetch(`${server.url}/count`, { method: 'POST' });
      expect([failed.status, failed.headers.get('retry-after'), await failed.json()]).toEqual([
        503,
        '4',
        { error: 'busy' },
      ]);
      expect(count()).toBe(0);
      await fetch(`${server.url}/__admin/faults/script`, {
        method: 'POST',
        body: JSON.stringify({ match: { op: 'count.add' }, action: { kind: 'dropResponse' } }),
      });
      await expect(fetch(`${server.url}/count`, { method: 'POST' })).rejects.toThrow();
      expect(count()).toBe(1);
      const requests = (await (await fetch(`${server.url}/__admin/requests`)).json()) as {
        items: BaseLogEntry[];
      };
      expect(requests.items.map((e) => [e.op, e.fault])).toEqual([
        ['count.add', 'error'],
        ['admin.script', undefined],
        ['count.add', 'dropResponse'],
      ]);
      expect(admin.requests({ op: 'count.add' })).toHaveLength(2);
    } finally {
      await server.close();
    }
  });

  it('holds a hanging request until the server closes', async () => {
    const { server, admin } = await toy();
    admin.fail({ op: 'count.get' }, { kind: 'hang' });
    const pending = fetch(`${server.url}/count/x`).then(
      () => 'answered',
      () => 'cut',
    );
    await new Promise((r) => setTimeout(r, 100));
    await server.close();
    expect(await pending).toBe('cut');
  });
});
