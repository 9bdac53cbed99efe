/** Checks and secrets of the OAuth store: redirect URIs, client secrets, codes and PKCE. */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { CalgateError } from '@calgate/core';
import { quoted } from './sql.ts';

export const REDIRECT_URIS_MAX = 10;
export const URL_MAX = 2048;
export const CLIENT_NAME_MAX = 200;
export const SCOPE_MAX = 1000;
export const CLIENT_SECRET_PREFIX = 'ocs_';
export const REFRESH_TOKEN_PREFIX = 'ocr_';
export const CLIENT_SECRET_PATTERN = /^ocs_[A-Za-z0-9]{32}$/;

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
// RFC 7636: 43–128 characters of the unreserved set.
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** An OAuth error (RFC 6749 / 7591 name) as a CalgateError, the name in `context.oauthError`. */
export function oauthError(
  code: 'invalid_argument' | 'not_found' | 'unauthenticated',
  oauth: string,
  message: string,
): CalgateError {
  return new CalgateError(code, message, { context: { oauthError: oauth } });
}

export const invalidGrant = (message: string) => oauthError('invalid_argument', 'invalid_grant', message);

export function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** `ocs_` and 32 base62 characters, uniformly random (bytes ≥ 248 are rejected, not folded). */
export function generateClientSecret(): string {
  let body = '';
  while (body.length < 32) {
    for (const byte of randomBytes(32)) {
      if (byte < 248 && body.length < 32) {
        body += ALPHABET[byte % 62];
      }
    }
  }
  return `${CLIENT_SECRET_PREFIX}${body}`;
}

/** 256 random bits, base64url: an authorization code. */
export const generateCode = () => randomBytes(32).toString('base64url');
export const generateRefreshToken = () => `${REFRESH_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;

/** Equal hashes, compared in constant time. */
export function sameHash(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** PKCE S256: base64url(SHA-256(verifier)) must equal the challenge. */
export function pkceMatches(verifier: string, challenge: string): boolean {
  if (!VERIFIER.test(verifier) || !CHALLENGE.test(challenge)) {
    return false;
  }
  return sameHash(Buffer.from(sha256(verifier).toString('base64url')), Buffer.from(challenge));
}

export function checkCodeChallenge(challenge: unknown): string {
  if (typeof challenge !== 'string' || !CHALLENGE.test(challenge)) {
    throw oauthError(
      'invalid_argument',
      'invalid_request',
      'The code challenge must be an S256 PKCE challenge: 43 base64url characters (no padding).',
    );
  }
  return challenge;
}

/**
 * One redirect URI: absolute, at most 2048 characters, no fragment and no credentials; https,
 * or http only for a loopback host (127.0.0.1, [::1], localhost) unless http is allowed.
 */
export function checkRedirectUri(value: unknown, allowHttp: boolean): string {
  const error = (why: string) => oauthError('invalid_argument', 'invalid_redirect_uri', why);
  if (typeof value !== 'string' || value === '') {
    throw error('Each redirect URI must be a non-empty string.');
  }
  if (value.length > URL_MAX) {
    throw error(
      `Redirect URI ${quoted(value)} is ${value.length} characters long; at most ${URL_MAX} are allowed.`,
    );
  }
  const url = URL.parse(value);
  if (url === null) {
    throw error(`Redirect URI ${quoted(value)} is not an absolute URL.`);
  }
  if (value.includes('#')) {
    throw error(`Redirect URI ${quoted(value)} must not contain a fragment (#).`);
  }
  if (url.username !== '' || url.password !== '') {
    throw error(`Redirect URI ${quoted(value)} must not contain a user name or password.`);
  }
  if (url.protocol === 'https:') {
    return value;
  }
  if (url.protocol === 'http:' && (allowHttp || LOOPBACK_HOSTS.has(url.hostname))) {
    return value;
  }
  throw error(
    `Redirect URI ${quoted(value)} must use https; http is allowed only for the loopback hosts 127.0.0.1, [::1] and localhost.`,
  );
}

/** 1 to 10 redirect URIs, each checked; duplicates are kept once. */
export function checkRedirectUris(values: unknown, allowHttp: boolean): string[] {
  if (!Array.isArray(values) || values.length === 0) {
    throw oauthError('invalid_argument', 'invalid_redirect_uri', 'Give at least one redirect URI.');
  }
  const uris = [...new Set(values.map((value) => checkRedirectUri(value, allowHttp)))];
  if (uris.length > REDIRECT_URIS_MAX) {
    throw oauthError(
      'invalid_argument',
      'invalid_redirect_uri',
      `${uris.length} redirect URIs given; at most ${REDIRECT_URIS_MAX} are allowed.`,
    );
  }
  return uris;
}

/**
 * The URL of a Client ID Metadata Document: https, with a path, no fragment, credentials or
 * dot segments, at most 2048 characters.
 */
export function checkMetadataDocumentUrl(value: unknown, allowHttp = false): string {
  const error = (why: string) => oauthError('invalid_argument', 'invalid_client_metadata', why);
  if (typeof value !== 'string' || value.length > URL_MAX) {
    throw error(`A client id URL must be a string of at most ${URL_MAX} characters.`);
  }
  const url = URL.parse(value);
  if (url === null || !(url.protocol === 'https:' || (allowHttp && url.protocol === 'http:'))) {
    throw error(`Client id ${quoted(value)} must be an absolute https URL.`);
  }
  if (value.includes('#') || url.username !== '' || url.password !== '') {
    throw error(`Client id ${quoted(value)} must not contain a fragment, user name or password.`);
  }
  if (url.pathname === '/' || /\/\.\.?(\/|$)/.test(value.slice(url.origin.length))) {
    throw error(`Client id ${quoted(value)} must have a path, without . or .. segments.`);
  }
  return value;
}
