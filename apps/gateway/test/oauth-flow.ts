import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { type Body, type Browser, call } from './api-client.ts';
import type { TestGateway } from './harness.ts';

/** A PKCE pair (RFC 7636, S256). */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A loopback "app" that receives the authorization response at /callback. */
export interface Callback {
  redirectUri: string;
  /** The next query the callback receives. */
  next(): Promise<URLSearchParams>;
  close(): Promise<void>;
}

export async function startCallback(): Promise<Callback> {
  const waiting: ((params: URLSearchParams) => void)[] = [];
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    response
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<title>Connected</title><p>You can close this window.</p>');
    waiting.shift()?.(url.searchParams);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    redirectUri: `http://127.0.0.1:${port}/callback`,
    next: () => new Promise((resolve) => waiting.push(resolve)),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** POSTs a form to the gateway (the token and revocation endpoints). */
export async function postForm(
  baseUrl: string,
  path: string,
  form: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Body; headers: Headers }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
  });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

export async function registerClient(
  gw: TestGateway,
  metadata: Record<string, unknown>,
): Promise<{ status: number; body: Body }> {
  const response = await fetch(`${gw.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(metadata),
  });
  return { status: response.status, body: await response.json() };
}

/** GET /oauth/authorize without following redirects: the status and where it sends the browser. */
export async function authorize(
  gw: TestGateway,
  params: Record<string, string>,
): Promise<{ status: number; location: string | null; text: string }> {
  const response = await fetch(`${gw.url}/oauth/authorize?${new URLSearchParams(params)}`, {
    redirect: 'manual',
  });
  return { status: response.status, location: response.headers.get('location'), text: await response.text() };
}

/** The consent page's request token from /oauth/authorize's redirect. */
export function consentRequest(location: string | null): string {
  const url = new URL(location ?? '', 'http://calgate.invalid');
  if (url.pathname !== '/consent') {
    throw new Error(`expected a redirect to /consent, got ${location}`);
  }
  return url.searchParams.get('request') ?? '';
}

/** Answers the consent page as the signed-in person would; returns where the browser goes next. */
export async function decide(
  gw: TestGateway,
  as: Browser,
  request: string,
  answer: {
    decision: 'allow' | 'deny';
    calendars?: { calendarId: string; read: boolean; write: boolean }[];
    toolsets?: string[];
    hijackPolicy?: string;
  },
): Promise<{ status: number; body: Body }> {
  return call(gw, 'POST', '/api/v1/oauth/consent', { as, body: { request, ...answer } });
}

/**
 * An MCP client's OAuth state kept in memory, as the official SDK's client expects it; the
 * authorization URL it would open in a browser is handed to `onRedirect`.
 */
export class MemoryOAuthProvider implements OAuthClientProvider {
  #client: OAuthClientInformationMixed | undefined;
  #tokens: OAuthTokens | undefined;
  #verifier = '';
  readonly #redirectUri: string;
  readonly #onRedirect: (url: URL) => void;
  readonly clientMetadataUrl: string | undefined;

  constructor(options: { redirectUri: string; onRedirect: (url: URL) => void; clientMetadataUrl?: string }) {
    this.#redirectUri = options.redirectUri;
    this.#onRedirect = options.onRedirect;
    this.clientMetadataUrl = options.clientMetadataUrl;
  }

  get redirectUrl(): string {
    return this.#redirectUri;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test Agent',
      redirect_uris: [this.#redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state(): string {
    return 'state-123';
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.#client;
  }

  saveClientInformation(client: OAuthClientInformationMixed): void {
    this.#client = client;
  }

  tokens(): OAuthTokens | undefined {
    return this.#tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.#tokens = tokens;
  }

  redirectToAuthorization(url: URL): void {
    this.#onRedirect(url);
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }

  codeVerifier(): string {
    return this.#verifier;
  }
}

/** What the token endpoint answers for a granted code or a refresh token. */
export interface TokenAnswer {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/**
 * A whole connection through the HTTP endpoints, as an app and the signed-in person make it:
 * register, /oauth/authorize, the consent page's answer (allow, with these calendars and
 * toolsets), then the code at the token endpoint. `resource` is the MCP URL the gateway serves
 * under its PUBLIC_URL (the listening address's by default). Returns the client id and the
 * token endpoint's whole answer, as text too (for tests that search it).
 */
export async function approveApp(
  gw: TestGateway,
  as: Browser,
  callback: Callback,
  choice: {
    calendars: { calendarId: string; read: boolean; write: boolean }[];
    toolsets?: string[];
    resource?: string;
    hijackPolicy?: string;
  },
): Promise<{ clientId: string; tokens: TokenAnswer; raw: string }> {
  const resource = choice.resource ?? gw.mcpUrl;
  const registered = await registerClient(gw, {
    client_name: 'Test Agent',
    redirect_uris: [callback.redirectUri],
  });
  if (registered.status !== 201) {
    throw new Error(`registration answered ${registered.status}: ${JSON.stringify(registered.body)}`);
  }
  const clientId = registered.body.client_id as string;
  const { verifier, challenge } = pkce();
  const started = await authorize(gw, {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: callback.redirectUri,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource,
  });
  const decided = await decide(gw, as, consentRequest(started.location), {
    decision: 'allow',
    calendars: choice.calendars,
    ...(choice.toolsets === undefined ? {} : { toolsets: choice.toolsets }),
    ...(choice.hijackPolicy === undefined ? {} : { hijackPolicy: choice.hijackPolicy }),
  });
  if (decided.status !== 200) {
    throw new Error(`consent answered ${decided.status}: ${JSON.stringify(decided.body)}`);
  }
  const code = new URL(decided.body.redirectTo).searchParams.get('code') ?? '';
  const response = await fetch(`${gw.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: callback.redirectUri,
      code_verifier: verifier,
      client_id: clientId,
      resource,
    }).toString(),
  });
  const raw = await response.text();
  if (response.status !== 200) {
    throw new Error(`the token endpoint answered ${response.status}: ${raw}`);
  }
  return { clientId, tokens: JSON.parse(raw) as TokenAnswer, raw };
}
