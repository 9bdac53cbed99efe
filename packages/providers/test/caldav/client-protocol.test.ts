/**
 * What Radicale and Xandikos never do but other servers do, played by a scripted server: iCloud's
 * absolute hrefs on a partition host, VTODO-only collections, read-only privileges, RFC 6578's
 * valid-sync-token and sync-traversal-supported refusals, server errors and redirect loops.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { CalgateError } from '@calgate/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CaldavClient } from '../../src/caldav/index.ts';

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

async function serve(handler: Handler): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => handler(req, body, res));
  });
  const port = await new Promise<number>((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : 0);
    });
  });
  return { server, origin: `http://127.0.0.1:${port}` };
}

const multistatus = (inner: string) =>
  `<?xml version="1.0"?><d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" xmlns:a="http://apple.com/ns/ical/">${inner}</d:multistatus>`;
const ok = (href: string, props: string) =>
  `<d:response><d:href>${href}</d:href><d:propstat><d:prop>${props}</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>`;

const PASSWORD = 'app:specific pass%20wörd';

describe('CalDAV client against a scripted iCloud-like server', () => {
  let front: { server: Server; origin: string };
  let partition: { server: Server; origin: string };
  const authorizations: string[] = [];

  beforeAll(async () => {
    partition = await serve((req, body, res) => {
      authorizations.push(
        Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString('utf8'),
      );
      const send = (status: number, xml: string) => {
        res.writeHead(status, { 'content-type': 'application/xml; charset=utf-8' });
        res.end(xml);
      };
      const p = partition.origin;
      if (req.url === '/123/principal/') {
        send(
          207,
          multistatus(
            ok(
              '/123/principal/',
              `<c:calendar-home-set><d:href>${p}/123/calendars/</d:href></c:calendar-home-set><c:calendar-user-address-set><d:href>urn:uuid:1</d:href><d:href>mailto:ann@example.com</d:href></c:calendar-user-address-set>`,
            ),
          ),
        );
      } else if (req.url === '/123/calendars/') {
        send(
          207,
          multistatus(
            ok('/123/calendars/', '<d:resourcetype><d:collection/></d:resourcetype>') +
              ok(
                '/123/calendars/home/',
                '<d:resourcetype><d:collection/><c:calendar/></d:resourcetype><d:displayname>Home</d:displayname><a:calendar-color>#FF2968FF</a:calendar-color><c:supported-calendar-component-set><c:comp name="VEVENT"/></c:supported-calendar-component-set><d:current-user-privilege-set><d:privilege><d:read/></d:privilege><d:privilege><d:write-content/></d:privilege></d:current-user-privilege-set><c:calendar-timezone>BEGIN:VCALENDAR\r\nBEGIN:VTIMEZONE\r\nTZID:America/Los_Angeles\r\nEND:VTIMEZONE\r\nEND:VCALENDAR</c:calendar-timezone>',
              ) +
              ok(
                '/123/calendars/tasks/',
                '<d:resourcetype><d:collection/><c:calendar/></d:resourcetype><d:displayname>Reminders</d:displayname><c:supported-calendar-component-set><c:comp name="VTODO"/></c:supported-calendar-component-set>',
              ) +
              ok(
                '/123/calendars/shared/',
                '<d:resourcetype><d:collection/><c:calendar/></d:resourcetype><d:displayname>Family</d:displayname><d:current-user-privilege-set><d:privilege><d:read/></d:privilege></d:current-user-privilege-set><c:calendar-timezone>Europe/Paris</c:calendar-timezone>',
              ) +
              ok(
                '/123/calendars/inbox/',
                '<d:resourcetype><d:collection/><c:schedule-inbox/></d:resourcetype>',
              ),
          ),
        );
      } else if (req.url === '/123/calendars/home/' && req.method === 'REPORT') {
        if (body.includes('<d:sync-token>old</d:sync-token>')) {
          send(403, '<?xml version="1.0"?><d:error xmlns:d="DAV:"><d:valid-sync-token/></d:error>');
        } else {
          send(403, '<?xml version="1.0"?><d:error xmlns:d="DAV:"><d:sync-traversal-supported/></d:error>');
        }
      } else if (req.url === '/busy/') {
        send(503, 'try later');
      } else if (req.url === '/loop/') {
        res.writeHead(302, { location: '/loop/' });
        res.end();
      } else {
        send(404, '');
      }
    });
    front = await serve((req, _body, res) => {
      if (req.url === '/.well-known/caldav') {
        res.writeHead(301, { location: '/' });
        res.end();
        return;
      }
      res.writeHead(207, { 'content-type': 'application/xml' });
      res.end(
        multistatus(
          ok(
            '/',
            `<d:current-user-principal><d:href>${partition.origin}/123/principal/</d:href></d:current-user-principal>`,
          ),
        ),
      );
    });
  });

  afterAll(async () => {
    await new Promise((r) => front.server.close(r));
    await new Promise((r) => partition.server.close(r));
  });

  const client = () =>
    new CaldavClient({
      credentials: { username: 'ann@icloud.example', password: PASSWORD },
      policy: { allowPrivate: true },
    });

  it('follows absolute hrefs to the partition host and keeps event calendars only', async () => {
    const account = await client().discover(`${front.origin}/.well-known/caldav`);
    expect(account.principalUrl).toBe(`${partition.origin}/123/principal/`);
    expect(account.accountEmail).toBe('ann@example.com');
    expect(account.calendars).toEqual([
      {
        url: `${partition.origin}/123/calendars/home/`,
        displayName: 'Home',
        color: '#ff2968',
        timeZone: 'America/Los_Angeles',
        writable: true,
      },
      {
        url: `${partition.origin}/123/calendars/shared/`,
        displayName: 'Family',
        timeZone: 'Europe/Paris',
        writable: false,
      },
    ]);
    expect(new Set(authorizations)).toEqual(new Set([`ann@icloud.example:${PASSWORD}`]));
  });

  it('tells an invalid sync token from a collection that cannot sync', async () => {
    const home = `${partition.origin}/123/calendars/home/`;
    expect(await client().syncCollection(home, 'old')).toEqual({ kind: 'token-invalid' });
    expect(await client().syncCollection(home, undefined)).toEqual({ kind: 'unsupported' });
  });

  it('answers server trouble as retryable and stops redirect loops', async () => {
    const busy = (await client()
      .calendarQuery(`${partition.origin}/busy/`)
      .catch((e: unknown) => e)) as CalgateError;
    expect([busy.code, busy.retry]).toEqual(['upstream_unavailable', true]);
    const loop = (await client()
      .discover(`${partition.origin}/loop/`)
      .catch((e: unknown) => e)) as CalgateError;
    expect(loop.message).toMatch(/redirected more than 5 times/);
  });
});
