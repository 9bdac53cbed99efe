/**
 * Real CalDAV servers for tests: Radicale and Xandikos (Debian packages `radicale`, `xandikos`)
 * on free loopback ports with temporary storage. Radicale checks passwords itself (htpasswd,
 * plain); Xandikos has no authentication of its own and, as its documentation advises, sits
 * behind a proxy that does (here a small Basic-auth proxy). Objects are seeded by `seed`, an
 * independent client: plain HTTP requests carrying hand-written iCalendar text.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A VCALENDAR around hand-written lines, CRLF-terminated as the RFC has it. */
export const ics = (...lines: string[]) =>
  ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//hand written//EN', ...lines, 'END:VCALENDAR', ''].join(
    '\r\n',
  );

/** A VCALENDAR holding one VEVENT with `uid` and the given lines. */
export const oneEvent = (uid: string, lines: readonly string[]) =>
  ics('BEGIN:VEVENT', `UID:${uid}`, 'DTSTAMP:20260101T000000Z', ...lines, 'END:VEVENT');

/** A password with every character Basic auth gets wrong when it is not UTF-8 throughout. */
export const HARD_PASSWORD = 'pä:ss wörd%41 ✓';

export interface TestCaldavServer {
  kind: 'radicale' | 'xandikos';
  /** The server root, e.g. `http://127.0.0.1:5232/`. */
  root: string;
  username: string;
  password: string;
  /** The principal's calendar home. */
  home: string;
  /** Plain HTTP as an independent client would send it (Basic auth of the main user). */
  raw(method: string, path: string, body?: string, headers?: Record<string, string>): Promise<Response>;
  /** Makes a calendar collection (MKCALENDAR with display name, colour and zone). */
  makeCalendar(
    path: string,
    props: { displayName: string; color?: string; timeZone?: string },
  ): Promise<void>;
  /** PUTs hand-written iCalendar text at `path`. */
  seed(path: string, ics: string): Promise<void>;
  /**
   * The main user's password changes on the server (as after a leak): the old one is refused
   * from the next request on; `raw`, `makeCalendar` and `seed` use the new one.
   */
  changePassword(password: string): void;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitForHttp(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`server exited early (${child.exitCode}): ${output()}`);
    }
    try {
      await fetch(url, { method: 'OPTIONS' });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`server did not start: ${output()}`);
}

function basic(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) {
      resolve();
      return;
    }
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

const xmlEscape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Requests as `username`; `password` is read on each request (it may change). */
function helpers(root: string, username: string, password: () => string) {
  const raw = (method: string, path: string, body?: string, headers: Record<string, string> = {}) =>
    fetch(new URL(path, root), {
      method,
      headers: { authorization: basic(username, password()), ...headers },
      ...(body === undefined ? {} : { body }),
    });
  return {
    raw,
    async makeCalendar(path: string, props: { displayName: string; color?: string; timeZone?: string }) {
      const made = await raw(
        'MKCALENDAR',
        path,
        `<?xml version="1.0" encoding="utf-8"?><C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:set><D:prop><D:displayname>${xmlEscape(props.displayName)}</D:displayname><C:supported-calendar-component-set><C:comp name="VEVENT"/></C:supported-calendar-component-set></D:prop></D:set></C:mkcalendar>`,
        { 'content-type': 'application/xml' },
      );
      if (made.status !== 201) {
        throw new Error(`MKCALENDAR ${path}: ${made.status} ${await made.text()}`);
      }
      // Colour and zone separately: a server that keeps only one of them still keeps that one.
      const extra: string[] = [];
      if (props.color !== undefined) {
        extra.push(`<A:calendar-color>${props.color}</A:calendar-color>`);
      }
      if (props.timeZone !== undefined) {
        const vtimezone = [
          'BEGIN:VCALENDAR',
          'VERSION:2.0',
          'PRODID:-//test//EN',
          'BEGIN:VTIMEZONE',
          `TZID:${props.timeZone}`,
          `X-LIC-LOCATION:${props.timeZone}`,
          'BEGIN:STANDARD',
          'DTSTART:19700101T000000',
          'TZOFFSETFROM:+0000',
          'TZOFFSETTO:+0000',
          'END:STANDARD',
          'END:VTIMEZONE',
          'END:VCALENDAR',
          '',
        ].join('\r\n');
        extra.push(
          `<C:calendar-timezone>${xmlEscape(vtimezone).replace(/\r/g, '&#13;')}</C:calendar-timezone>`,
        );
      }
      for (const prop of extra) {
        await raw(
          'PROPPATCH',
          path,
          `<?xml version="1.0" encoding="utf-8"?><D:propertyupdate xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav" xmlns:A="http://apple.com/ns/ical/"><D:set><D:prop>${prop}</D:prop></D:set></D:propertyupdate>`,
          { 'content-type': 'application/xml' },
        );
      }
    },
    async seed(path: string, ics: string) {
      const response = await raw('PUT', path, ics, { 'content-type': 'text/calendar; charset=utf-8' });
      if (response.status !== 201 && response.status !== 204) {
        throw new Error(`PUT ${path}: ${response.status} ${await response.text()}`);
      }
    },
  };
}

/**
 * Radicale with two users: `alice` (password {@link HARD_PASSWORD}) and `bob`, whose calendar
 * `/bob/shared/` alice may read but not write.
 */
export async function startRadicale(): Promise<
  TestCaldavServer & { bob: ReturnType<typeof helpers>; storage: string }
> {
  const dir = mkdtempSync(join(tmpdir(), 'calgate-radicale-'));
  const port = await freePort();
  writeFileSync(join(dir, 'users'), `alice:${HARD_PASSWORD}\nbob:bob-password\n`, 'utf8');
  writeFileSync(
    join(dir, 'rights'),
    [
      '[root]',
      'user: .+',
      'collection:',
      'permissions: R',
      '',
      '[shared]',
      'user: alice',
      'collection: bob/shared(/.*)?',
      'permissions: r',
      '',
      '[bob-principal]',
      'user: alice',
      'collection: bob',
      'permissions: R',
      '',
      '[principal]',
      'user: .+',
      'collection: {user}',
      'permissions: RW',
      '',
      '[calendars]',
      'user: .+',
      'collection: {user}/[^/]+',
      'permissions: rw',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'config'),
    [
      '[server]',
      `hosts = 127.0.0.1:${port}`,
      '[auth]',
      'type = htpasswd',
      `htpasswd_filename = ${join(dir, 'users')}`,
      'htpasswd_encryption = plain',
      'delay = 0',
      '[rights]',
      'type = from_file',
      `file = ${join(dir, 'rights')}`,
      '[storage]',
      `filesystem_folder = ${join(dir, 'collections')}`,
      '[web]',
      'type = none',
      '[logging]',
      'level = warning',
      '',
    ].join('\n'),
  );
  let output = '';
  const child = spawn('/usr/bin/radicale', ['--config', join(dir, 'config')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const root = `http://127.0.0.1:${port}/`;
  await waitForHttp(root, child, () => output);
  let password = HARD_PASSWORD;
  const alice = helpers(root, 'alice', () => password);
  const bob = helpers(root, 'bob', () => 'bob-password');
  // Radicale makes a principal's collection on its first authenticated request.
  await alice.raw('PROPFIND', '/alice/', undefined, { depth: '0' });
  await bob.raw('PROPFIND', '/bob/', undefined, { depth: '0' });
  return {
    kind: 'radicale',
    root,
    username: 'alice',
    get password() {
      return password;
    },
    home: `${root}alice/`,
    ...alice,
    changePassword(changed: string) {
      // Radicale reads its htpasswd file on every request.
      password = changed;
      writeFileSync(join(dir, 'users'), `alice:${changed}\nbob:bob-password\n`, 'utf8');
    },
    bob,
    /** Radicale's storage folder (collection-root/<user>/<calendar>/<object>.ics). */
    storage: join(dir, 'collections'),
    async stop() {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Xandikos behind a Basic-auth proxy (user `alice`, password {@link HARD_PASSWORD}). */
export async function startXandikos(): Promise<TestCaldavServer> {
  const dir = mkdtempSync(join(tmpdir(), 'calgate-xandikos-'));
  const backendPort = await freePort();
  let output = '';
  const child = spawn(
    '/usr/bin/xandikos',
    [
      '-d',
      dir,
      '-l',
      '127.0.0.1',
      '-p',
      String(backendPort),
      '--defaults',
      '--current-user-principal',
      '/alice/',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  await waitForHttp(`http://127.0.0.1:${backendPort}/`, child, () => output);
  let password = HARD_PASSWORD;
  const proxy: Server = createServer((req, res) => {
    if (req.headers.authorization !== basic('alice', password)) {
      req.resume();
      res.writeHead(401, { 'www-authenticate': 'Basic realm="xandikos"', 'content-type': 'text/plain' });
      res.end('authentication required');
      return;
    }
    const upstream = httpRequest(
      { host: '127.0.0.1', port: backendPort, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  const port = await new Promise<number>((resolve) => {
    proxy.listen(0, '127.0.0.1', () => {
      const address = proxy.address();
      resolve(typeof address === 'object' && address !== null ? address.port : 0);
    });
  });
  const root = `http://127.0.0.1:${port}/`;
  return {
    kind: 'xandikos',
    root,
    username: 'alice',
    get password() {
      return password;
    },
    home: `${root}alice/calendars/`,
    ...helpers(root, 'alice', () => password),
    changePassword(changed: string) {
      password = changed;
    },
    async stop() {
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A front door that redirects every request to another origin (as iCloud sends accounts from
 * caldav.icloud.com to their partition host), keeping the method and body (307).
 */
export async function startRedirector(target: string): Promise<{ url: string; stop(): Promise<void> }> {
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(req.url === '/.well-known/caldav' ? 301 : 307, {
      location: new URL(req.url === '/.well-known/caldav' ? '/' : (req.url ?? '/'), target).toString(),
    });
    res.end();
  });
  const port = await new Promise<number>((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : 0);
    });
  });
  return {
    url: `http://localhost:${port}/`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** What an intercepting proxy's handler sees of one request, its body read whole. */
export interface Intercepted {
  req: IncomingMessage;
  res: ServerResponse;
  body: Buffer;
  /** Sends the request on to the server; `onStatus` sees the server's status first. */
  forward(onStatus?: (status: number) => void): void;
}

/**
 * A loopback front for `target` whose `handle` sees each request with its body and either answers
 * it itself or forwards it (`forward`), unchanged but for the Host header.
 */
export async function startInterceptingProxy(
  target: string,
  handle: (request: Intercepted) => void | Promise<void>,
): Promise<{ root: string; stop(): Promise<void> }> {
  const backend = new URL(target);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const forward = (onStatus?: (status: number) => void): void => {
        const headers = { ...req.headers, host: backend.host, 'content-length': String(body.length) };
        delete headers['transfer-encoding'];
        const upstream = httpRequest(
          { host: backend.hostname, port: backend.port, method: req.method, path: req.url, headers },
          (answer) => {
            onStatus?.(answer.statusCode ?? 0);
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        upstream.on('error', () => {
          res.writeHead(502);
          res.end();
        });
        upstream.end(body);
      };
      void Promise.resolve(handle({ req, res, body, forward })).catch(() => {
        res.writeHead(500);
        res.end();
      });
    });
  });
  const port = await new Promise<number>((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : 0);
    });
  });
  return {
    root: `http://127.0.0.1:${port}/`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * A front for a CalDAV server that does not offer RFC 6578: every REPORT sync-collection is
 * answered with `status` (403 with DAV:supported-report, as servers that do not know the report
 * answer, a bare 403 with no reason, or 501) while `refusing` is true; everything else passes
 * through unchanged.
 */
export async function startSyncRefusingProxy(
  target: string,
  status: 403 | '403 bare' | 501,
): Promise<{ root: string; refusing: boolean; refused: number; stop(): Promise<void> }> {
  const state = { root: '', refusing: true, refused: 0, stop: async () => {} };
  const proxy = await startInterceptingProxy(target, ({ req, res, body, forward }) => {
    if (!(state.refusing && req.method === 'REPORT' && /sync-collection/.test(body.toString('utf8')))) {
      forward();
      return;
    }
    state.refused += 1;
    if (status === 403) {
      res.writeHead(403, { 'content-type': 'application/xml; charset=utf-8' });
      res.end(
        '<?xml version="1.0" encoding="utf-8"?><D:error xmlns:D="DAV:"><D:supported-report/></D:error>',
      );
    } else if (status === '403 bare') {
      res.writeHead(403, { 'content-type': 'text/plain' });
      res.end('Forbidden');
    } else {
      res.writeHead(501, { 'content-type': 'text/plain' });
      res.end('REPORT sync-collection is not implemented');
    }
  });
  state.root = proxy.root;
  state.stop = proxy.stop;
  return state;
}
