import { createHmac, timingSafeEqual } from 'node:crypto';
import { CalgateError } from '@calgate/core';
import type { TotpRepository } from '@calgate/store';
import {
  generateRecoveryCodes,
  generateTotpSecret,
  hashRecoveryCode,
  looksLikeTotpCode,
  matchTotp,
  otpauthUri,
} from './totp.ts';

/** How long a sign-in that passed the password step may take to give its code. */
export const CHALLENGE_TTL_MS = 5 * 60 * 1000;

/** The roles that may turn two-step sign-in on; a database without roles allows everyone. */
const TOTP_ROLES: ReadonlySet<string> = new Set(['owner', 'admin']);

/** Who a challenge is for. */
export interface ChallengeSubject {
  userId: string;
  tenantId: string;
}

/** What a set-up hands out once: the secret and the URI an authenticator app reads. */
export interface TotpSetup {
  secret: string;
  otpauthUri: string;
}

/** How a code was accepted: a time-based code, or one of the recovery codes. */
export type SecondFactor = { kind: 'totp' } | { kind: 'recovery'; left: number };

/**
 * Two-step sign-in: setting up, confirming and disabling a person's authenticator, the signed
 * challenge that carries a sign-in from the password step to the code step (no session exists
 * in between), and checking a code once — a time step or a recovery code is spent on use.
 */
export class TwoStepSignIn {
  readonly #repository: TotpRepository;
  readonly #challengeKey: Uint8Array;
  readonly #now: () => number;

  constructor(repository: TotpRepository, challengeKey: Uint8Array, options: { now?: () => number } = {}) {
    this.#repository = repository;
    this.#challengeKey = challengeKey;
    this.#now = options.now ?? Date.now;
  }

  /** True when the user's sign-in needs a code after the password. */
  required(user: ChallengeSubject): Promise<boolean> {
    return this.#repository.isEnabled(user.tenantId, user.userId);
  }

  /** Whether the user's role may turn two-step sign-in on (owners and admins). */
  async allowed(user: ChallengeSubject): Promise<boolean> {
    const role = await this.#repository.roleOf(user.tenantId, user.userId);
    return role === null || TOTP_ROLES.has(role);
  }

  /** The state the account page shows. */
  async status(
    user: ChallengeSubject,
  ): Promise<{ enabled: boolean; allowed: boolean; recoveryCodesLeft: number }> {
    const [record, allowed] = await Promise.all([
      this.#repository.get(user.tenantId, user.userId),
      this.allowed(user),
    ]);
    const enabled = record?.confirmedAt != null;
    return { enabled, allowed, recoveryCodesLeft: enabled ? (record?.recoveryCodesLeft ?? 0) : 0 };
  }

  /** Starts a set-up with a new secret; it guards nothing until confirmed. */
  async setup(user: ChallengeSubject, email: string): Promise<TotpSetup> {
    if (!(await this.allowed(user))) {
      throw new CalgateError(
        'permission_denied',
        'Two-step sign-in is for owners and admins; ask an owner to change your role first.',
      );
    }
    const secret = generateTotpSecret();
    await this.#repository.begin(user.tenantId, user.userId, secret);
    return { secret, otpauthUri: otpauthUri(secret, email) };
  }

  /** Confirms a set-up with a code from the app; returns the recovery codes, shown this once. */
  async confirm(user: ChallengeSubject, code: string): Promise<string[]> {
    const record = await this.#repository.get(user.tenantId, user.userId);
    if (record === null || record.confirmedAt !== null) {
      throw new CalgateError(
        'precondition_failed',
        record === null
          ? 'There is no two-step set-up to confirm; start one with POST /api/v1/account/totp/setup.'
          : 'Two-step sign-in is already on for this account.',
      );
    }
    const step = matchTotp(record.secret, code, this.#now());
    if (step === null) {
      throw wrongCode();
    }
    const codes = generateRecoveryCodes();
    if (!(await this.#repository.confirm(user.tenantId, user.userId, step, codes.map(hashRecoveryCode)))) {
      throw new CalgateError('conflict', 'The set-up changed meanwhile; start it again.');
    }
    return codes;
  }

  /**
   * Checks a 6-digit code or a recovery code for a user with two-step sign-in on, spending it.
   * Null when it is wrong, too old, or already used.
   */
  async verify(user: ChallengeSubject, code: string): Promise<SecondFactor | null> {
    const record = await this.#repository.get(user.tenantId, user.userId);
    if (record === null || record.confirmedAt === null) {
      return null;
    }
    if (looksLikeTotpCode(code)) {
      const step = matchTotp(record.secret, code, this.#now(), record.lastUsedStep);
      return step !== null && (await this.#repository.useStep(user.tenantId, user.userId, step))
        ? { kind: 'totp' }
        : null;
    }
    return (await this.#repository.useRecoveryCode(user.tenantId, user.userId, hashRecoveryCode(code)))
      ? { kind: 'recovery', left: record.recoveryCodesLeft - 1 }
      : null;
  }

  /** Turns two-step sign-in off (the caller has checked the password and a code). */
  disable(user: ChallengeSubject): Promise<boolean> {
    return this.#repository.remove(user.tenantId, user.userId);
  }

  /** A signed, short-lived challenge naming the user who passed the password step. */
  challenge(user: ChallengeSubject): string {
    const body = Buffer.from(
      JSON.stringify({ u: user.userId, t: user.tenantId, e: this.#now() + CHALLENGE_TTL_MS }),
    ).toString('base64url');
    return `${body}.${this.#sign(body)}`;
  }

  /** The user a challenge names, or null when it is forged, malformed or expired. */
  readChallenge(challenge: string): ChallengeSubject | null {
    const [body, mac, extra] = challenge.split('.');
    if (body === undefined || mac === undefined || extra !== undefined) {
      return null;
    }
    const expected = Buffer.from(this.#sign(body));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return null;
    }
    try {
      const parsed: unknown = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
      if (
        typeof parsed === 'object' &&
        parsed !== null &&
        'u' in parsed &&
        't' in parsed &&
        'e' in parsed &&
        typeof parsed.u === 'string' &&
        typeof parsed.t === 'string' &&
        typeof parsed.e === 'number' &&
        parsed.e > this.#now()
      ) {
        return { userId: parsed.u, tenantId: parsed.t };
      }
    } catch {
      return null;
    }
    return null;
  }

  #sign(body: string): string {
    return createHmac('sha256', this.#challengeKey).update(`totp-challenge:${body}`).digest('base64url');
  }
}

export function wrongCode(): CalgateError {
  return new CalgateError('invalid_argument', 'code: this code is wrong, expired or already used');
}
