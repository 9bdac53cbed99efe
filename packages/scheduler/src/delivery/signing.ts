import { createHmac, randomBytes } from 'node:crypto';
import { type CalgateError, err, invalidArgument, ok, type Result } from '@calgate/core';

/**
 * Standard Webhooks v1 (https://www.standardwebhooks.com): an HMAC-SHA256 over
 * `{webhook-id}.{webhook-timestamp}.{body}` keyed with the bytes of a `whsec_` secret.
 */

const SECRET_PREFIX = 'whsec_';
/** The spec asks for 24 to 64 bytes of key; new secrets use 32. */
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;
const NEW_KEY_BYTES = 32;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
/** Header-safe, printable ASCII without spaces: what a receiver can store and compare. */
const MESSAGE_ID = /^[\x21-\x7e]{1,256}$/;

/** A decoded signing key. Holds the bytes only; never printed. */
export interface WebhookKey {
  readonly bytes: Buffer;
}

export interface WebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** A new secret to show once to the target's owner: `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(NEW_KEY_BYTES).toString('base64')}`;
}

/** Decodes a `whsec_` secret. The error never repeats the secret. */
export function parseWebhookSecret(secret: string): Result<WebhookKey, CalgateError> {
  if (!secret.startsWith(SECRET_PREFIX)) {
    return err(invalidArgument('webhook secret must start with "whsec_"'));
  }
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (encoded.length % 4 !== 0 || !BASE64.test(encoded)) {
    return err(invalidArgument('webhook secret is not valid base64 after "whsec_"'));
  }
  const bytes = Buffer.from(encoded, 'base64');
  if (bytes.length < MIN_KEY_BYTES || bytes.length > MAX_KEY_BYTES) {
    return err(
      invalidArgument(`webhook secret must decode to ${MIN_KEY_BYTES}–${MAX_KEY_BYTES} bytes`, {
        bytes: bytes.length,
      }),
    );
  }
  return ok({ bytes });
}

/** Whether `id` can be sent as `webhook-id`. */
export function isValidMessageId(id: string): boolean {
  return MESSAGE_ID.test(id);
}

/** The `v1,<base64>` signature of one message. Deterministic: same inputs, same signature. */
export function signatureFor(key: WebhookKey, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', key.bytes).update(`${id}.${timestampSeconds}.${body}`, 'utf8').digest();
  return `v1,${mac.toString('base64')}`;
}

/**
 * The three Standard Webhooks headers for `body`. Several keys (during a secret rotation) give
 * several space-separated signatures, any of which a receiver accepts.
 */
export function signWebhook(
  keys: WebhookKey | readonly WebhookKey[],
  message: { id: string; timestamp: Date; body: string },
): WebhookHeaders {
  const seconds = Math.floor(message.timestamp.getTime() / 1000);
  const list = Array.isArray(keys) ? keys : [keys as WebhookKey];
  return {
    'webhook-id': message.id,
    'webhook-timestamp': String(seconds),
    'webhook-signature': list.map((key) => signatureFor(key, message.id, seconds, message.body)).join(' '),
  };
}
