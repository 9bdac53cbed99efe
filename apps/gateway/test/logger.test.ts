import { Writable } from 'node:stream';
import Fastify, { LogController } from 'fastify';
import { describe, expect, it, vi } from 'vitest';
import { createLogger, requestLoggerFactory } from '../src/logger.ts';

describe('pino logger', () => {
  it('redacts secrets wherever they appear in a log line', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const log = createLogger('info', sink);
    log.info(
      {
        req: { headers: { authorization: 'Bearer cg_live_SECRET1', cookie: 'session=SECRET2' } },
        connection: { refreshToken: 'SECRET3', access_token: 'SECRET4', password: 'SECRET5' },
        key: { secret: 'SECRET6' },
        config: { encryptionKey: 'SECRET7', google: { clientSecret: 'SECRET8' } },
      },
      'something happened',
    );
    const line = lines.join('');
    expect(line).toContain('something happened');
    expect(line).not.toMatch(/SECRET\d/);
    expect(line).toContain('[redacted]');
  });
});

describe('request loggers', () => {
  function sinkLogger(level: string) {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
        done();
      },
    });
    return { log: createLogger(level, sink), lines };
  }

  async function appWith(level: string) {
    const { log, lines } = sinkLogger(level);
    const child = vi.spyOn(log, 'child');
    // Fastify makes one child of its own at start; request loggers are those with a request id.
    const children = () => child.mock.calls.filter(([bindings]) => 'reqId' in bindings).length;
    // As the gateway has it: no line per request, only what handlers log.
    const app = Fastify({
      loggerInstance: log,
      childLoggerFactory: requestLoggerFactory,
      genReqId: () => 'req_1',
      logController: new LogController({ disableRequestLogging: true }),
    });
    app.get('/quiet', async (request) => {
      request.log.debug({ token: 'SECRET1' }, 'not at this level');
      return { level: request.log.level };
    });
    app.get('/loud', async (request) => {
      request.log.warn({ connection: { token: 'SECRET2' } }, 'first');
      request.log.error('second');
      return 'ok';
    });
    app.get('/own-level', { logLevel: 'debug' }, async (request) => {
      request.log.debug('debug on this route');
      return 'ok';
    });
    return { app, lines, children };
  }

  it('makes no child logger for a request that logs nothing at an enabled level', async () => {
    const { app, lines, children } = await appWith('info');
    const reply = await app.inject({ url: '/quiet' });
    expect(reply.json()).toEqual({ level: 'info' });
    expect(lines).toEqual([]);
    expect(children()).toBe(0);
    await app.close();
  });

  it('writes what a request logs with its id, through one child, redacted', async () => {
    const { app, lines, children } = await appWith('info');
    await app.inject({ url: '/loud', headers: { authorization: 'Bearer SECRET3' } });
    expect(lines.map(({ reqId, msg, level }) => ({ reqId, msg, level }))).toEqual([
      { reqId: 'req_1', msg: 'first', level: 40 },
      { reqId: 'req_1', msg: 'second', level: 50 },
    ]);
    expect(JSON.stringify(lines)).not.toMatch(/SECRET\d/);
    expect(children()).toBe(1);
    await app.close();
  });

  it("keeps a route's own log level", async () => {
    const { app, lines } = await appWith('info');
    await app.inject({ url: '/own-level' });
    expect(lines.map(({ reqId, msg }) => ({ reqId, msg }))).toEqual([
      { reqId: 'req_1', msg: 'debug on this route' },
    ]);
    await app.close();
  });
});
