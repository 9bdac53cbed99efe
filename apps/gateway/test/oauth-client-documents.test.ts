import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { CalgateError } from '@calgate/core';
import { OAuthRepository } from '@calgate/store';
import { createTestDatabase, type TestDatabase } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientDocuments, type ClientDocumentsOptions } from '../src/oauth/client-documents.ts';
import { selfSignedCertificate, type TestCertificate } from './tls.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const REDIRECT = 'http://127.0.0.1:8976/callback';
const MINUTE = 60_000;

let db: TestDatabase;
let repo: OAuthRepository;
let certificate: TestCertificate;
let ca: string;
let https: Server;
let http: Server;
let httpsBase: string;
let httpBase: string;
const handlers = new Map<string, Handler>();
const hits = new Map<string, number>();

function serve(req: IncomingMessage, res: ServerResponse): void {
  const path = req.url ?? '/';
  hits.set(path, (hits.get(path) ?? 0) + 1);
  const handler = handlers.get(path);
  if (handler === undefined) {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('no such document');
    return;
  }
  handler(req, res);
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  db = await createTestDatabase();
  repo = new OAuthRepository(db);
  certificate = selfSignedCertificate();
  ca = certificate.cert;
  https = createHttpsServer({ key: certificate.key, cert: ca }, serve);
  http = createHttpServer(serve);
  httpsBase = `https://${await listen(https)}`;
  httpBase = `http://${await listen(http)}`;
});

afterAll(async () => {
  https.closeAllConnections();
  http.closeAllConnections();
  await Promise.all([https, http].map((s) => new Promise((resolve) => s.close(resolve))));
  certificate.remove();
  await db.close();
});

let counter = 0;
/** A fresh document path on the https server, served by `handler` (a valid document by default). */
function doc(handler?: (url: string) => Handler): { url: string; path: string; hits: () => number } {
  counter += 1;
  const path = `/clients/c${counter}.json`;
  const url = `${httpsBase}${path}`;
  handlers.set(
    path,
    handler?.(url) ??
      json(() => ({ client_id: url, client_name: `Client ${counter}`, redirect_uris: [REDIRECT] })),
  );
  return { url, path, hits: () => hits.get(path) ?? 0 };
}

/** Answers a JSON document, with extra headers. */
function json(body: () => unknown, headers: Record<string, string> = {}): Handler {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', ...headers });
    res.end(JSON.stringify(body()));
  };
}

function clock(start = Date.now()) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

function documents(options: Partial<ClientDocumentsOptions> = {}): ClientDocuments {
  return new ClientDocuments({ repository: repo, allowPrivate: true, ca, ...options });
}

async function refusal(promise: Promise<unknown>): Promise<CalgateError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CalgateError);
  const failure = error as CalgateError;
  expect(failure.context.oauthError).toBe('invalid_client');
  return failure;
}

describe('ClientDocuments: a valid metadata document', () => {
  it('resolves, is stored, and is reused while fresh', async () => {
    const d = doc();
    const time = clock();
    const docs = documents({ now: time.now });
    const client = await docs.resolve(d.url);
    expect(client).toMatchObject({ clientId: d.url, kind: 'metadata_document', redirectUris: [REDIRECT] });
    expect(client.clientName).toMatch(/^Client \d+$/);
    expect(await repo.getClient(d.url)).toMatchObject({ clientId: d.url, kind: 'metadata_document' });
    time.advance(9 * MINUTE); // default freshness is 10 minutes
    expect((await docs.resolve(d.url)).id).toBe(client.id);
    expect(d.hits()).toBe(1);
    time.advance(2 * MINUTE);
    await docs.resolve(d.url);
    expect(d.hits()).toBe(2);
  });

  it('is fetched again after its Cache-Control max-age, and the stored copy is updated', async () => {
    let name = 'Before';
    const d = doc((url) =>
      json(() => ({ client_id: url, client_name: name, redirect_uris: [REDIRECT] }), {
        'cache-control': 'public, max-age=120',
      }),
    );
    const time = clock();
    const docs = documents({ now: time.now });
    expect((await docs.resolve(d.url)).clientName).toBe('Before');
    name = 'After';
    time.advance(119_000);
    expect((await docs.resolve(d.url)).clientName).toBe('Before');
    expect(d.hits()).toBe(1);
    time.advance(2_000);
    expect((await docs.resolve(d.url)).clientName).toBe('After');
    expect(d.hits()).toBe(2);
    expect((await repo.getClient(d.url))?.clientName).toBe('After');
  });

  it('keeps no-store documents for the 60 s floor and caps max-age at 24 h', async () => {
    const noStore = doc((url) =>
      json(() => ({ client_id: url, redirect_uris: [REDIRECT] }), { 'cache-control': 'no-store' }),
    );
    const long = doc((url) =>
      json(() => ({ client_id: url, redirect_uris: [REDIRECT] }), { 'cache-control': 'max-age=31536000' }),
    );
    const time = clock();
    const docs = documents({ now: time.now });
    const client = await docs.resolve(noStore.url);
    expect(client.clientName).toBe(new URL(noStore.url).host); // no client_name: the host
    await docs.resolve(long.url);
    time.advance(59_000);
    await docs.resolve(noStore.url);
    expect(noStore.hits()).toBe(1);
    time.advance(2_000);
    await docs.resolve(noStore.url);
    expect(noStore.hits()).toBe(2);
    time.advance(24 * 60 * MINUTE);
    await docs.resolve(long.url);
    expect(long.hits()).toBe(2);
  });

  it('shares one fetch between concurrent resolutions of a URL', async () => {
    const d = doc((url) => (req, res) => {
      setTimeout(() => json(() => ({ client_id: url, redirect_uris: [REDIRECT] }))(req, res), 200);
    });
    const docs = documents();
    const clients = await Promise.all([docs.resolve(d.url), docs.resolve(d.url), docs.resolve(d.url)]);
    expect(new Set(clients.map((c) => c.id)).size).toBe(1);
    expect(d.hits()).toBe(1);
  });
});

describe('ClientDocuments: a stale document whose server is unreachable', () => {
  it('serves the last good copy on a 5xx for up to 24 h after its last fetch', async () => {
    let down = false;
    const d = doc((url) => (req, res) => {
      if (down) {
        res.writeHead(503, { 'content-type': 'text/plain' }).end('maintenance');
        return;
      }
      json(() => ({ client_id: url, client_name: 'Steady', redirect_uris: [REDIRECT] }))(req, res);
    });
    const time = clock();
    const docs = documents({ now: time.now });
    const first = await docs.resolve(d.url);
    down = true;
    time.advance(11 * MINUTE);
    expect((await docs.resolve(d.url)).id).toBe(first.id);
    expect(d.hits()).toBe(2);
    time.advance(30_000); // a failed refresh is not retried within a minute
    await docs.resolve(d.url);
    expect(d.hits()).toBe(2);
    time.advance(24 * 60 * MINUTE);
    const error = await refusal(docs.resolve(d.url));
    expect(error.message).toBe(
      `Client metadata document ${JSON.stringify(d.url)} could not be fetched: HTTP 503.`,
    );
  });

  it('serves the stored copy when the server is gone, even in a process that never fetched it', async () => {
    const server = createHttpsServer({ key: certificate.key, cert: ca }, (_req, res) =>
      json(() => ({ client_id: url, client_name: 'Gone', redirect_uris: [REDIRECT] }))(_req, res),
    );
    const url = `https://${await listen(server)}/clients/gone.json`;
    const first = await documents().resolve(url);
    await new Promise((resolve) => server.close(resolve));
    const fresh = documents({ now: clock(Date.now() + 60 * MINUTE).now });
    expect((await fresh.resolve(url)).id).toBe(first.id);
    const late = documents({ now: clock(Date.now() + 25 * 60 * MINUTE).now });
    const error = await refusal(late.resolve(url));
    expect(error.message).toBe(
      `Client metadata document ${JSON.stringify(url)} could not be fetched: ECONNREFUSED.`,
    );
  });

  it('refuses a document whose server now answers 404, even with a copy in hand', async () => {
    let gone = false;
    const d = doc((url) => (req, res) => {
      if (gone) {
        res.writeHead(404).end();
        return;
      }
      json(() => ({ client_id: url, redirect_uris: [REDIRECT] }))(req, res);
    });
    const time = clock();
    const docs = documents({ now: time.now });
    await docs.resolve(d.url);
    gone = true;
    time.advance(11 * MINUTE);
    const error = await refusal(docs.resolve(d.url));
    expect(error.message).toBe(`Client metadata document ${JSON.stringify(d.url)} answered HTTP 404.`);
  });
});

describe('ClientDocuments: refused documents', () => {
  it('refuses a document whose client_id is another URL', async () => {
    const d = doc(() =>
      json(() => ({ client_id: 'https://evil.example/client.json', redirect_uris: [REDIRECT] })),
    );
    const error = await refusal(documents().resolve(d.url));
    expect(error.message).toContain(`Client metadata document ${JSON.stringify(d.url)} is not acceptable:`);
    expect(error.message).toContain(
      "client_id 'https://evil.example/client.json' is not the URL it was fetched from",
    );
    expect(await repo.getClient(d.url)).toBeNull();
  });

  it('refuses a redirect without following it', async () => {
    const target = doc();
    const d = doc(() => (_req, res) => {
      res.writeHead(302, { location: target.url }).end();
    });
    const error = await refusal(documents().resolve(d.url));
    expect(error.message).toBe(
      `Client metadata document ${JSON.stringify(d.url)} answered HTTP 302 (a redirect); redirects are not followed, the document must be served at its client_id URL.`,
    );
    expect(target.hits()).toBe(0);
  });

  it('refuses a document larger than maxBytes, by Content-Length or while streaming', async () => {
    const padding = 'x'.repeat(6000);
    const declared = doc((url) => (_req, res) => {
      const body = JSON.stringify({ client_id: url, redirect_uris: [REDIRECT], padding });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
    const streamed = doc(() => (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`{"padding":"${'y'.repeat(4000)}`);
      setTimeout(() => res.end(`${'y'.repeat(4000)}"}`), 20);
    });
    const docs = documents();
    const first = await refusal(docs.resolve(declared.url));
    expect(first.message).toMatch(/ is larger than 5120 bytes \(Content-Length 6\d{3}\)\.$/);
    const second = await refusal(docs.resolve(streamed.url));
    expect(second.message).toBe(
      `Client metadata document ${JSON.stringify(streamed.url)} is larger than 5120 bytes.`,
    );
  });

  it('gives up on a slow server after timeoutMs, headers and body together', async () => {
    const d = doc(() => (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"client_id":'); // and nothing more
    });
    const started = Date.now();
    const error = await refusal(documents({ timeoutMs: 300 }).resolve(d.url));
    expect(error.message).toBe(`Client metadata document ${JSON.stringify(d.url)} timed out after 300 ms.`);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('refuses a body that is not JSON, quoting only a short excerpt', async () => {
    const d = doc(() => (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`<html><body>${'secret '.repeat(100)}</body></html>`);
    });
    const error = await refusal(documents().resolve(d.url));
    expect(error.message).toMatch(/ is not JSON \(starts with "<html><body>secret .*…"\)\.$/);
    expect(error.message.length).toBeLessThan(200);
  });

  it('refuses a content type other than application/json', async () => {
    const d = doc((url) => (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(JSON.stringify({ client_id: url }));
    });
    const error = await refusal(documents().resolve(d.url));
    expect(error.message).toBe(
      `Client metadata document ${JSON.stringify(d.url)} has content type "text/html"; application/json is required.`,
    );
  });

  it('refuses a 404', async () => {
    const url = `${httpsBase}/clients/missing.json`;
    const error = await refusal(documents().resolve(url));
    expect(error.message).toBe(`Client metadata document ${JSON.stringify(url)} answered HTTP 404.`);
  });
});

describe('ClientDocuments: SSRF guards', () => {
  it('refuses an http URL without allowPrivate, before any request', async () => {
    const path = '/clients/plain.json';
    const url = `${httpBase}${path}`;
    const error = await refusal(documents({ allowPrivate: false }).resolve(url));
    expect(error.message).toBe(
      `Client id ${JSON.stringify(url)} must be an https URL; http is accepted only with OAUTH_ALLOW_PRIVATE_CLIENTS=true.`,
    );
    expect(hits.get(path)).toBeUndefined();
  });

  it('refuses a loopback https URL without allowPrivate, before any request', async () => {
    const d = doc();
    const error = await refusal(documents({ allowPrivate: false }).resolve(d.url));
    expect(error.message).toBe(
      `Client id ${JSON.stringify(d.url)} points at 127.0.0.1, a loopback address: metadata documents are fetched from public addresses only; set OAUTH_ALLOW_PRIVATE_CLIENTS=true only for a test or lab network.`,
    );
    expect(d.hits()).toBe(0);
  });

  it('refuses a host name that resolves to loopback without allowPrivate', async () => {
    const url = 'https://localhost:1/clients/x.json';
    const error = await refusal(documents({ allowPrivate: false }).resolve(url));
    expect(error.message).toMatch(
      /^Client id "https:\/\/localhost:1\/clients\/x.json" resolves to (127\.0\.0\.1|::1), a loopback address/,
    );
  });

  it('refuses the cloud metadata address even with allowPrivate', async () => {
    const url = 'http://169.254.169.254/latest/meta-data.json';
    const error = await refusal(documents({ allowPrivate: true }).resolve(url));
    expect(error.message).toBe(
      `Client id ${JSON.stringify(url)} points at 169.254.169.254, a cloud metadata address: metadata documents are fetched from public addresses only.`,
    );
  });

  it('says so when the TLS certificate is not trusted (self-signed without ca)', async () => {
    const d = doc();
    const error = await refusal(documents({ ca: undefined }).resolve(d.url));
    expect(error.message).toBe(
      `Client metadata document ${JSON.stringify(d.url)} could not be fetched: its TLS certificate is not trusted (DEPTH_ZERO_SELF_SIGNED_CERT).`,
    );
  });

  it('refuses a URL without a path or with dot segments', async () => {
    const docs = documents();
    expect((await refusal(docs.resolve(`${httpsBase}/`))).message).toContain('must have a path');
    expect((await refusal(docs.resolve(`${httpsBase}/a/../b.json`))).message).toContain('must have a path');
  });
});

describe('ClientDocuments: registered clients', () => {
  it('resolves a registered client from the store without any fetch', async () => {
    const { client } = await repo.registerClient({ clientName: 'Desktop', redirectUris: [REDIRECT] });
    const found = await documents({ allowPrivate: false }).resolve(client.clientId);
    expect(found).toMatchObject({ id: client.id, kind: 'registered', clientName: 'Desktop' });
  });

  it('refuses an unknown registered id as invalid_client', async () => {
    const error = await refusal(documents().resolve('ocl_doesnotexist'));
    expect(error.code).toBe('not_found');
    expect(error.message).toBe('No OAuth client "ocl_doesnotexist".');
  });
});
