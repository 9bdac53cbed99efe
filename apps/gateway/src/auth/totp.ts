import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Time-based one-time passwords (RFC 6238 over RFC 4226 HOTP) as authenticator apps compute
 * them: HMAC-SHA1, 30-second steps, 6 digits. Verification accepts the step before and after
 * the current one (clocks drift) and reports which step matched, so the caller can refuse
 * that step — and every earlier one — from then on.
 */

export const TOTP_STEP_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** Steps either side of the current one that still count. */
export const TOTP_WINDOW = 1;
/** 20 random bytes: the key length RFC 4226 recommends for HMAC-SHA1. */
const SECRET_BYTES = 20;

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 without padding, the form authenticator apps accept. */
export function base32Encode(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) {
    out += BASE32[(value << (5 - bits)) & 31];
  }
  return out;
}

/** Reads base32 (case, spaces and padding ignored); null when a character is not base32. */
export function base32Decode(text: string): Buffer | null {
  const clean = text.replace(/[\s=]/g, '').toUpperCase();
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const char of clean) {
    const index = BASE32.indexOf(char);
    if (index < 0) {
      return null;
    }
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** A new random TOTP secret, base32. */
export function generateTotpSecret(): string {
  return base32Encode(randomBytes(SECRET_BYTES));
}

/** The time step a moment falls in. */
export function totpStep(nowMs: number): number {
  return Math.floor(nowMs / 1000 / TOTP_STEP_SECONDS);
}

/**
 * The HOTP value of `key` at counter `step` (RFC 4226 §5.3: dynamic truncation), as `digits`
 * decimal digits. `algorithm` is there for the RFC 6238 test vectors; Calgate uses SHA-1.
 */
export function hotp(key: Uint8Array, step: number, digits = TOTP_DIGITS, algorithm = 'sha1'): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac(algorithm, key).update(counter).digest();
  const offset = (mac[mac.length - 1] as number) & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

/** The code an authenticator shows for a base32 secret at a moment. */
export function totpCode(secret: string, nowMs: number): string {
  const key = base32Decode(secret);
  if (key === null) {
    throw new Error('TOTP secret is not base32');
  }
  return hotp(key, totpStep(nowMs));
}

/** True for something shaped like a 6-digit code (spaces allowed, as apps group digits). */
export function looksLikeTotpCode(code: string): boolean {
  return /^\d{6}$/.test(code.replace(/\s/g, ''));
}

/**
 * The step at which `code` is valid for `secret` within ±TOTP_WINDOW of now, or null. Steps at
 * or before `lastUsedStep` never match, so a code (or an older one) cannot be used twice.
 */
export function matchTotp(
  secret: string,
  code: string,
  nowMs: number,
  lastUsedStep: number | null = null,
): number | null {
  const key = base32Decode(secret);
  const given = Buffer.from(code.replace(/\s/g, ''));
  if (key === null || !looksLikeTotpCode(code)) {
    return null;
  }
  const current = totpStep(nowMs);
  for (let step = current - TOTP_WINDOW; step <= current + TOTP_WINDOW; step += 1) {
    if (lastUsedStep !== null && step <= lastUsedStep) {
      continue;
    }
    const expected = Buffer.from(hotp(key, step));
    if (timingSafeEqual(expected, given)) {
      return step;
    }
  }
  return null;
}

/**
 * The otpauth:// URI authenticator apps read (Key Uri Format): issuer Calgate, labelled with
 * the person's email.
 */
export function otpauthUri(secret: string, email: string, issuer = 'Calgate'): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(email)}`;
  const params = new URLSearchParams({
    secret,
    issuer,
    algorithm: 'SHA1',
    digits: String(TOTP_DIGITS),
    period: String(TOTP_STEP_SECONDS),
  });
  return `otpauth://totp/${label}?${params.toString()}`;
}

export const RECOVERY_CODE_COUNT = 10;

/**
 * Ten one-time recovery codes, each 12 base32 characters (60 random bits) in three groups,
 * e.g. `K7QM-2XRD-PW4A`.
 */
export function generateRecoveryCodes(count = RECOVERY_CODE_COUNT): string[] {
  return Array.from({ length: count }, () => {
    const raw = base32Encode(randomBytes(8)).slice(0, 12);
    return `${raw.slice(0, 4)}-${raw.slice(4, 8)}-${raw.slice(8, 12)}`;
  });
}

/** A recovery code as typed, without dashes, spaces or case: the form that is hashed. */
export function normalizeRecoveryCode(code: string): string {
  return code.replace(/[\s-]/g, '').toUpperCase();
}

/**
 * The stored form of a recovery code: SHA-256 of its normalised text. The codes carry 60
 * random bits and every try is rate-limited, so a fast hash is enough; the table never holds
 * a usable code.
 */
export function hashRecoveryCode(code: string): string {
  return createHash('sha256').update(normalizeRecoveryCode(code), 'utf8').digest('hex');
}
