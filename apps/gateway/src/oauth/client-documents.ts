/**
 * Client ID Metadata Documents: an MCP client's `client_id` may be an https URL whose JSON
 * document describes it (name, redirect URIs). This module turns a `client_id` into a client
 * record, fetching such documents safely and keeping them for as long as their server allows.
 *
 * Why each guard exists — the URL comes from whoever opens the authorization page, so every
 * fetch is a request an anonymous stranger makes Calgate send:
 * - https only, public addresses only (`checkTargetUrl`): otherwise a client_id could make the
 *   gateway probe loopback admin ports, the private network or the cloud metadata service
 *   (server-side request forgery). Every A/AAAA answer is checked, not just the first.
 * - The connection goes only to the vetted addresses (`pinnedLookup`): a second DNS answer
 *   (DNS rebinding) cannot send it elsewhere.
 * - No redirects: a redirect would lead to a URL nobody checked, and the draft requires the
 *   document to be served at the client_id itself.
 * - A time limit over the whole exchange and a byte limit enforced while the body streams: a
 *   slow or endless answer cannot hold a request, a socket or memory.
 * - `application/json` only, a short excerpt at most in messages: an HTML page or an internal
 *   error dump is not a client description, and its content is never echoed back.
 * - 4xx and invalid documents are refused at once; only transient trouble (network, timeout,
 *   5xx) falls back to the last good copy, so a client cannot be disowned by an outage but can be
 *   withdrawn by its owner.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { getCACertificates, rootCertificates } from 'node:tls';
import { CalgateError, type ErrorCode } from '@calgate/core';
import {
  type AddressClass,
  checkTargetUrl,
  describeAddressClass,
  pinnedLookup,
  type ResolvedAddress,
} from '@calgate/scheduler';
import type { OAuthClientRecord, OAuthRepository } from '@calgate/store';

export interface ClientDocumentsOptions {
  repository: OAuthRepository;
  /** OAUTH_ALLOW_PRIVATE_CLIENTS: metadata documents may live on loopback/private addresses and be fetched over http (tests, labs). */
  allowPrivate: boolean;
  /** Extra trusted CA certificates (PEM) for https fetches; production trusts the system store (and NODE_EXTRA_CA_CERTS). */
  ca?: string | undefined;
  /** Whole fetch, headers and body; default 5 000 ms. */
  timeoutMs?: number;
  /** Largest accepted document; default 5 KiB (the draft suggests 5 KB). */
  maxBytes?: number;
  now?: () => number;
}

const SECOND = 1000;
const MIN_FRESH_MS = 60 * SECOND;
const MAX_FRESH_MS = 24 * 60 * 60 * SECOND;
const DEFAULT_FRESH_MS = 10 * 60 * SECOND;
/** How long after its last successful fetch a document may stand in while its server is unreachable. */
const MAX_STALE_MS = 24 * 60 * 60 * SECOND;
const URL_MAX = 2048;
/** Documents kept in memory; past this the oldest make way (the store still has them). */
const CACHE_MAX = 1000;
const EXCERPT_MAX = 60;
const TLS_TRUST_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

interface CachedClient {
  client: OAuthClientRecord;
  /** Until when (by `now`) the copy is used without asking its server again. */
  freshUntil: number;
  /** When it was last fetched successfully. */
  fetchedAt: number;
}

/**
 * An `invalid_client` failure, shaped like the store's `oauthError` (the OAuth name in
 * `context.oauthError`). `retry: true` marks transient trouble, after which a stale copy may serve.
 */
function invalidClient(message: string, options: { code?: ErrorCode; retry?: boolean } = {}): CalgateError {
  return new CalgateError(options.code ?? 'invalid_argument', message, {
    retry: options.retry ?? false,
    context: { oauthError: 'invalid_client' },
  });
}

const q = (value: string) => JSON.stringify(value);

/** Freshness from Cache-Control: max-age bounded to [60 s, 24 h]; no-store/no-cache → 60 s; else 10 min. */
export function freshnessMs(cacheControl: string | null): number {
  if (cacheControl === null) {
    return DEFAULT_FRESH_MS;
  }
  const directives = cacheControl
    .toLowerCase()
    .split(',')
    .map((part) => part.trim());
  if (directives.includes('no-store') || directives.includes('no-cache')) {
    return MIN_FRESH_MS;
  }
  for (const directive of directives) {
    const match = /^max-age\s*=\s*"?(\d+)"?$/.exec(directive);
    if (match?.[1] !== undefined) {
      return Math.min(MAX_FRESH_MS, Math.max(MIN_FRESH_MS, Number(match[1]) * SECOND));
    }
  }
  return DEFAULT_FRESH_MS;
}

/** A printable, short start of a body that was not what it should be. */
function excerpt(bytes: Buffer): string {
  const text = bytes
    .subarray(0, EXCERPT_MAX * 4)
    .toString('utf8')
    .replace(/[^\x20-\x7e]+/g, ' ')
    .trim();
  return text.length > EXCERPT_MAX ? `${text.slice(0, EXCERPT_MAX)}…` : text;
}

export class ClientDocuments {
  readonly #repository: OAuthRepository;
  readonly #allowPrivate: boolean;
  readonly #ca: string[] | undefined;
  readonly #timeoutMs: number;
  readonly #maxBytes: number;
  readonly #now: () => number;
  readonly #cache = new Map<string, CachedClient>();
  readonly #inFlight = new Map<string, Promise<OAuthClientRecord>>();

  constructor(options: ClientDocumentsOptions) {
    this.#repository = options.repository;
    this.#allowPrivate = options.allowPrivate;
    // `ca` replaces Node's trust store for a request, so the extra certificate joins the default
    // set (bundled roots plus NODE_EXTRA_CA_CERTS) rather than standing alone.
    this.#ca = options.ca === undefined ? undefined : [...defaultCertificates(), options.ca];
    this.#timeoutMs = options.timeoutMs ?? 5 * SECOND;
    this.#maxBytes = options.maxBytes ?? 5 * 1024;
    this.#now = options.now ?? Date.now;
  }

  /**
   * The client for an OAuth client_id: a registered client (`ocl_…`) straight from the store; an
   * http(s) URL → its metadata document, fetched, checked and stored, reused while fresh
   * (Cache-Control max-age bounded to [60 s, 24 h], 10 min without one). Concurrent resolutions
   * of one URL share one fetch.
   *
   * A stale document whose server cannot be reached (network error, timeout, 5xx) is still used
   * for up to 24 h after its last successful fetch, and asked for again at most once a minute
   * meanwhile; a 4xx, a redirect or an invalid document is refused at once. Failures are
   * `invalid_client` errors naming the URL and what was wrong.
   */
  async resolve(clientId: string): Promise<OAuthClientRecord> {
    if (!/^https?:\/\//i.test(clientId)) {
      return this.#registered(clientId);
    }
    const cached = this.#cache.get(clientId);
    if (cached !== undefined && this.#now() < cached.freshUntil) {
      return cached.client;
    }
    const pending = this.#inFlight.get(clientId);
    if (pending !== undefined) {
      return pending;
    }
    const refresh = this.#refresh(clientId, cached).finally(() => this.#inFlight.delete(clientId));
    this.#inFlight.set(clientId, refresh);
    return refresh;
  }

  async #registered(clientId: string): Promise<OAuthClientRecord> {
    const client = await this.#repository.getClient(clientId);
    if (client === null || client.kind !== 'registered') {
      throw invalidClient(`No OAuth client ${q(clientId.slice(0, 200))}.`, { code: 'not_found' });
    }
    return client;
  }

  async #refresh(url: string, cached: CachedClient | undefined): Promise<OAuthClientRecord> {
    try {
      const { document, freshMs } = await this.#fetch(url);
      const client = await this.#save(url, document);
      const fetchedAt = this.#now();
      this.#remember(url, { client, freshUntil: fetchedAt + freshMs, fetchedAt });
      return client;
    } catch (error) {
      if (!(error instanceof CalgateError)) {
        throw error;
      }
      if (!error.retry) {
        this.#cache.delete(url);
        throw error;
      }
      const stale = cached ?? (await this.#stored(url));
      const now = this.#now();
      if (stale === undefined || now - stale.fetchedAt >= MAX_STALE_MS) {
        throw error;
      }
      const freshUntil = Math.min(now + MIN_FRESH_MS, stale.fetchedAt + MAX_STALE_MS);
      this.#remember(url, { ...stale, freshUntil });
      return stale.client;
    }
  }

  #remember(url: string, entry: CachedClient): void {
    this.#cache.delete(url);
    this.#cache.set(url, entry);
    for (const oldest of this.#cache.keys()) {
      if (this.#cache.size <= CACHE_MAX) {
        break;
      }
      this.#cache.delete(oldest);
    }
  }

  /** The stored copy, for a process that has not fetched this document itself yet. */
  async #stored(url: string): Promise<CachedClient | undefined> {
    const client = await this.#repository.getClient(url);
    if (client === null || client.kind !== 'metadata_document') {
      return undefined;
    }
    const fetchedAt = client.refreshedAt.getTime();
    return { client, fetchedAt, freshUntil: fetchedAt };
  }

  async #save(url: string, document: Record<string, unknown>): Promise<OAuthClientRecord> {
    try {
      return await this.#repository.saveMetadataDocumentClient(url, document);
    } catch (error) {
      if (error instanceof CalgateError && error.code === 'invalid_argument') {
        throw invalidClient(`Client metadata document ${q(url)} is not acceptable: ${error.message}`);
      }
      throw error;
    }
  }

  /** The URL's shape, then its addresses (`checkTargetUrl`); returns the addresses to connect to. */
  async #check(value: string): Promise<{ url: URL; addresses: ResolvedAddress[] }> {
    const refuse = (why: string) => invalidClient(`Client id ${q(value.slice(0, 200))} ${why}`);
    if (value.length > URL_MAX) {
      throw refuse(`is longer than ${URL_MAX} characters.`);
    }
    const url = URL.parse(value);
    if (url === null) {
      throw refuse('is not an absolute URL.');
    }
    if (url.protocol === 'http:' && !this.#allowPrivate) {
      throw refuse('must be an https URL; http is accepted only with OAUTH_ALLOW_PRIVATE_CLIENTS=true.');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw refuse('must be an https URL.');
    }
    if (value.includes('#') || url.username !== '' || url.password !== '') {
      throw refuse('must not contain a fragment, user name or password.');
    }
    if (url.pathname === '/' || /\/\.\.?(\/|$)/.test(value.slice(url.origin.length))) {
      throw refuse('must have a path, without . or .. segments.');
    }
    const checked = await checkTargetUrl(value, {
      allowPrivate: this.#allowPrivate,
      requireHttps: !this.#allowPrivate,
    });
    if (checked.ok) {
      return checked.value;
    }
    const { code, context } = checked.error;
    if (code === 'permission_denied') {
      const host = String(context.host);
      const address = String(context.address);
      const kind = context.addressClass as AddressClass;
      const where = host === address ? `points at ${address}` : `resolves to ${address}`;
      const hint =
        this.#allowPrivate || kind === 'metadata' || kind === 'multicast' || kind === 'broadcast'
          ? ''
          : '; set OAUTH_ALLOW_PRIVATE_CLIENTS=true only for a test or lab network';
      throw refuse(
        `${where}, ${describeAddressClass(kind)}: metadata documents are fetched from public addresses only${hint}.`,
      );
    }
    if (code === 'unavailable') {
      throw invalidClient(`Client id ${q(value)}: host ${url.hostname} could not be resolved.`, {
        retry: true,
      });
    }
    throw refuse(`is refused: ${checked.error.message}.`);
  }

  async #fetch(value: string): Promise<{ document: Record<string, unknown>; freshMs: number }> {
    const { url, addresses } = await this.#check(value);
    const res = await this.#request(value, url, addresses);
    const { document } = res;
    if (typeof document !== 'object' || document === null || Array.isArray(document)) {
      throw invalidClient(`Client metadata document ${q(value)} is JSON but not an object.`);
    }
    return { document: document as Record<string, unknown>, freshMs: freshnessMs(res.cacheControl) };
  }

  /** One GET to the vetted addresses, no redirects, under the time and size limits. */
  #request(
    value: string,
    url: URL,
    addresses: ResolvedAddress[],
  ): Promise<{ document: unknown; cacheControl: string | null }> {
    const limit = this.#maxBytes;
    const timeoutMs = this.#timeoutMs;
    const signal = AbortSignal.timeout(timeoutMs);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const doc = `Client metadata document ${q(value)}`;
    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (error: CalgateError) => {
        if (!settled) {
          settled = true;
          reject(error);
        }
        req.destroy();
      };
      const failure = (error: unknown): CalgateError => {
        if (signal.aborted) {
          return invalidClient(`${doc} timed out after ${timeoutMs} ms.`, { retry: true });
        }
        const code = (error as { code?: unknown }).code;
        if (typeof code === 'string' && TLS_TRUST_CODES.has(code)) {
          return invalidClient(`${doc} could not be fetched: its TLS certificate is not trusted (${code}).`, {
            retry: true,
          });
        }
        const why = typeof code === 'string' ? code : (error as Error).message;
        return invalidClient(`${doc} could not be fetched: ${why}.`, { retry: true });
      };
      const req = send(url, {
        method: 'GET',
        headers: { accept: 'application/json', 'user-agent': 'Calgate' },
        agent: false,
        lookup: pinnedLookup(addresses),
        signal,
        ...(this.#ca === undefined ? {} : { ca: this.#ca }),
      });
      req.on('error', (error) => fail(failure(error)));
      req.on('response', (res: IncomingMessage) => {
        const refusal = this.#refusal(doc, res, limit);
        if (refusal !== undefined) {
          fail(refusal);
          return;
        }
        const chunks: Buffer[] = [];
        let received = 0;
        res.on('data', (chunk: Buffer) => {
          received += chunk.byteLength;
          if (received > limit) {
            fail(invalidClient(`${doc} is larger than ${limit} bytes.`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('error', (error) => fail(failure(error)));
        res.on('close', () => {
          if (!res.complete) {
            fail(failure(new Error('connection closed before the whole document arrived')));
          }
        });
        res.on('end', () => {
          if (settled) {
            return;
          }
          const body = Buffer.concat(chunks);
          let document: unknown;
          try {
            document = JSON.parse(body.toString('utf8'));
          } catch {
            fail(invalidClient(`${doc} is not JSON (starts with ${q(excerpt(body))}).`));
            return;
          }
          settled = true;
          resolve({ document, cacheControl: res.headers['cache-control'] ?? null });
        });
      });
      req.end();
    });
  }

  /** A refusal decided from the status line and headers, before any of the body is read. */
  #refusal(doc: string, res: IncomingMessage, limit: number): CalgateError | undefined {
    const status = res.statusCode ?? 0;
    if (status >= 300 && status < 400) {
      return invalidClient(
        `${doc} answered HTTP ${status} (a redirect); redirects are not followed, the document must be served at its client_id URL.`,
      );
    }
    if (status >= 500) {
      return invalidClient(`${doc} could not be fetched: HTTP ${status}.`, { retry: true });
    }
    if (status !== 200) {
      return invalidClient(`${doc} answered HTTP ${status}.`);
    }
    const type = res.headers['content-type'] ?? '';
    if (type.split(';')[0]?.trim().toLowerCase() !== 'application/json') {
      return invalidClient(
        `${doc} has content type ${q(type.slice(0, 100) || '(none)')}; application/json is required.`,
      );
    }
    const length = Number(res.headers['content-length']);
    if (Number.isFinite(length) && length > limit) {
      return invalidClient(`${doc} is larger than ${limit} bytes (Content-Length ${length}).`);
    }
    return undefined;
  }
}

/** Node's default trust store: bundled roots plus NODE_EXTRA_CA_CERTS (and system ones when enabled). */
function defaultCertificates(): readonly string[] {
  return typeof getCACertificates === 'function' ? getCACertificates('default') : rootCertificates;
}
