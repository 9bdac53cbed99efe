/**
 * OAuth clients: dynamically registered ones (with an optional hashed secret) and those described
 * by a Client ID Metadata Document, as `oauth_clients` rows.
 */
import { newId } from '@calgate/core';
import type pg from 'pg';
import {
  CLIENT_NAME_MAX,
  checkMetadataDocumentUrl,
  checkRedirectUris,
  generateClientSecret,
  oauthError,
  sameHash,
  sha256,
} from '../oauth-validation.ts';
import { cleanText, ms, quoted } from '../sql.ts';

export type OAuthClientKind = 'registered' | 'metadata_document';
export type TokenEndpointAuthMethod = 'none' | 'client_secret_basic' | 'client_secret_post';
const AUTH_METHODS: readonly string[] = ['none', 'client_secret_basic', 'client_secret_post'];
const METADATA_MAX = 16_384;

/** A client as stored; its secret (if any) is never part of it. */
export interface OAuthClientRecord {
  id: string;
  clientId: string;
  kind: OAuthClientKind;
  clientName: string;
  redirectUris: string[];
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  metadata: Record<string, unknown>;
  createdAt: Date;
  refreshedAt: Date;
}

interface ClientRow {
  id: string;
  client_id: string;
  kind: OAuthClientKind;
  client_name: string;
  redirect_uris: string[];
  token_endpoint_auth_method: TokenEndpointAuthMethod;
  metadata: Record<string, unknown>;
  created_at: number;
  refreshed_at: number;
}

const CLIENT_COLUMNS = `id, client_id, kind, client_name, redirect_uris, token_endpoint_auth_method, metadata, ${ms('created_at')}, ${ms('refreshed_at')}`;

function client(row: ClientRow): OAuthClientRecord {
  return {
    id: row.id,
    clientId: row.client_id,
    kind: row.kind,
    clientName: row.client_name,
    redirectUris: row.redirect_uris,
    tokenEndpointAuthMethod: row.token_endpoint_auth_method,
    metadata: row.metadata,
    createdAt: new Date(row.created_at),
    refreshedAt: new Date(row.refreshed_at),
  };
}

export const clientNotFound = (clientId: string) =>
  oauthError('not_found', 'invalid_client', `No OAuth client ${quoted(clientId)}.`);

function checkMetadata(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw oauthError('invalid_argument', 'invalid_client_metadata', 'Client metadata must be a JSON object.');
  }
  if (JSON.stringify(value).length > METADATA_MAX) {
    throw oauthError(
      'invalid_argument',
      'invalid_client_metadata',
      `Client metadata is larger than ${METADATA_MAX.toLocaleString('en')} characters.`,
    );
  }
  return value as Record<string, unknown>;
}

/** Dynamic registration; a secret (`ocs_…`) is returned only here, and stored hashed. */
export async function registerClient(
  pool: pg.Pool,
  allowHttp: boolean,
  input: {
    clientName: string;
    redirectUris: readonly string[];
    tokenEndpointAuthMethod?: TokenEndpointAuthMethod;
    metadata?: Record<string, unknown>;
  },
): Promise<{ client: OAuthClientRecord; clientSecret?: string }> {
  const name = cleanText(input.clientName, 'Client name', CLIENT_NAME_MAX);
  const redirectUris = checkRedirectUris(input.redirectUris, allowHttp);
  const method = input.tokenEndpointAuthMethod ?? 'none';
  if (!AUTH_METHODS.includes(method)) {
    throw oauthError(
      'invalid_argument',
      'invalid_client_metadata',
      `Token endpoint auth method ${quoted(String(method))} is not supported: use none, client_secret_basic or client_secret_post.`,
    );
  }
  const metadata = checkMetadata(input.metadata ?? {});
  const secret = method === 'none' ? undefined : generateClientSecret();
  const id = newId('ocl');
  const { rows } = await pool.query<ClientRow>(
    `INSERT INTO oauth_clients (id, client_id, kind, client_name, redirect_uris, token_endpoint_auth_method, client_secret_hash, metadata)
     VALUES ($1, $1, 'registered', $2, $3, $4, $5, $6) RETURNING ${CLIENT_COLUMNS}`,
    [id, name, redirectUris, method, secret === undefined ? null : sha256(secret), metadata],
  );
  const record = client(rows[0] as ClientRow);
  return secret === undefined ? { client: record } : { client: record, clientSecret: secret };
}

/**
 * Stores (or refreshes) a client described by the Client ID Metadata Document at `url`. The
 * document's client_id must be that URL; such clients are public (auth method none).
 */
export async function saveMetadataDocumentClient(
  pool: pg.Pool,
  options: { allowHttp: boolean; allowHttpDocuments: boolean },
  url: string,
  document: Record<string, unknown>,
): Promise<OAuthClientRecord> {
  const clientId = checkMetadataDocumentUrl(url, options.allowHttpDocuments);
  const metadata = checkMetadata(document);
  if (metadata.client_id !== clientId) {
    throw oauthError(
      'invalid_argument',
      'invalid_client_metadata',
      `The metadata document's client_id ${quoted(String(metadata.client_id ?? '(none)'))} is not the URL it was fetched from, ${quoted(clientId)}.`,
    );
  }
  const method = metadata.token_endpoint_auth_method ?? 'none';
  if (method !== 'none') {
    throw oauthError(
      'invalid_argument',
      'invalid_client_metadata',
      `Token endpoint auth method ${quoted(String(method))} is not supported for metadata-document clients: use none.`,
    );
  }
  const redirectUris = checkRedirectUris(metadata.redirect_uris, options.allowHttp);
  const name =
    metadata.client_name === undefined
      ? new URL(clientId).host
      : cleanText(metadata.client_name, 'Client name', CLIENT_NAME_MAX);
  const { rows } = await pool.query<ClientRow>(
    `INSERT INTO oauth_clients (id, client_id, kind, client_name, redirect_uris, token_endpoint_auth_method, metadata)
     VALUES ($1, $2, 'metadata_document', $3, $4, 'none', $5)
     ON CONFLICT (client_id) DO UPDATE SET client_name = EXCLUDED.client_name,
       redirect_uris = EXCLUDED.redirect_uris, metadata = EXCLUDED.metadata, refreshed_at = now()
     WHERE oauth_clients.kind = 'metadata_document'
     RETURNING ${CLIENT_COLUMNS}`,
    [newId('ocl'), clientId, name, redirectUris, metadata],
  );
  const [row] = rows;
  if (row === undefined) {
    throw oauthError(
      'invalid_argument',
      'invalid_client_metadata',
      `Client id ${quoted(clientId)} is taken.`,
    );
  }
  return client(row);
}

export async function getClient(pool: pg.Pool, clientId: string): Promise<OAuthClientRecord | null> {
  const { rows } = await pool.query<ClientRow>(
    `SELECT ${CLIENT_COLUMNS} FROM oauth_clients WHERE client_id = $1`,
    [clientId],
  );
  const [row] = rows;
  return row === undefined ? null : client(row);
}

/** Whether `secret` is this client's secret; false for public and unknown clients. */
export async function verifyClientSecret(pool: pg.Pool, clientId: string, secret: string): Promise<boolean> {
  const { rows } = await pool.query<{ client_secret_hash: Buffer | null }>(
    'SELECT client_secret_hash FROM oauth_clients WHERE client_id = $1',
    [clientId],
  );
  const stored = rows[0]?.client_secret_hash ?? null;
  // Hash and compare even without a stored hash, so timing does not tell which clients exist.
  const matches = sameHash(sha256(secret), stored ?? Buffer.alloc(32));
  return stored !== null && matches;
}
