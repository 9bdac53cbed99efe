/**
 * JWTs: verifying a service account's RS256 assertion for the jwt-bearer grant (checked against
 * the seeded public key, with Google's error messages), and signing OpenID id_tokens with the
 * emulator's own key, published at /oauth2/v3/certs.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { compactVerify, decodeJwt, decodeProtectedHeader, exportJWK, SignJWT } from 'jose';
import { OAuthError } from '../errors.ts';
import type { EmulatorState, ServiceAccountRecord, UserAccount } from '../state.ts';

/** Audiences google-auth-library and other clients put in assertions. */
export const TOKEN_AUDIENCES = [
  'https://oauth2.googleapis.com/token',
  'https://www.googleapis.com/oauth2/v4/token',
  'https://accounts.google.com/o/oauth2/token',
];

export interface VerifiedAssertion {
  account: ServiceAccountRecord;
  scopes: string[];
  /** The user impersonated through domain-wide delegation. */
  subject?: string;
}

const SHORT_LIVED =
  'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.';

export async function verifyAssertion(
  state: EmulatorState,
  assertion: string,
  ownTokenUrl: string,
): Promise<VerifiedAssertion> {
  let header: ReturnType<typeof decodeProtectedHeader>;
  let claims: ReturnType<typeof decodeJwt>;
  try {
    header = decodeProtectedHeader(assertion);
    claims = decodeJwt(assertion);
  } catch {
    throw new OAuthError(400, 'invalid_grant', 'Invalid JWT: Malformed assertion.');
  }
  const account = typeof claims.iss === 'string' ? state.serviceAccounts.get(claims.iss) : undefined;
  if (!account) {
    throw new OAuthError(400, 'invalid_grant', 'Invalid grant: account not found');
  }
  if (header.alg !== 'RS256' || (header.kid !== undefined && header.kid !== account.keyId)) {
    throw new OAuthError(400, 'invalid_grant', 'Invalid JWT Signature.');
  }
  try {
    await compactVerify(assertion, account.publicKey, { algorithms: ['RS256'] });
  } catch {
    throw new OAuthError(400, 'invalid_grant', 'Invalid JWT Signature.');
  }
  const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!audiences.some((a) => a === ownTokenUrl || TOKEN_AUDIENCES.includes(String(a)))) {
    throw new OAuthError(400, 'invalid_grant', 'Invalid JWT: Failed audience check.');
  }
  const now = Math.floor(state.now() / 1000);
  const { iat, exp } = claims;
  if (
    typeof iat !== 'number' ||
    typeof exp !== 'number' ||
    exp <= now ||
    iat > now + 300 ||
    exp - iat > 3600
  ) {
    throw new OAuthError(400, 'invalid_grant', SHORT_LIVED);
  }
  if (typeof claims.scope !== 'string' || claims.scope.trim() === '') {
    throw new OAuthError(400, 'invalid_scope', 'Invalid OAuth scope or ID token audience provided.');
  }
  const result: VerifiedAssertion = { account, scopes: claims.scope.trim().split(/\s+/) };
  if (typeof claims.sub === 'string' && claims.sub !== account.email) {
    if (!account.domainWideDelegation) {
      throw new OAuthError(
        401,
        'unauthorized_client',
        'Client is unauthorized to retrieve access tokens using this method, or client not authorized for any of the scopes requested.',
      );
    }
    if (!state.accounts.has(claims.sub)) {
      throw new OAuthError(400, 'invalid_grant', 'Invalid email or User ID');
    }
    result.subject = claims.sub;
  }
  return result;
}

/** The emulator's id_token signing key, made on first use. */
export class IdTokenSigner {
  #key: { privateKey: KeyObject; publicKey: KeyObject; kid: string } | null = null;

  #keys() {
    if (this.#key === null) {
      const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      this.#key = { privateKey, publicKey, kid: `emu-${Date.now().toString(16)}` };
    }
    return this.#key;
  }

  async jwks(): Promise<{ keys: Record<string, unknown>[] }> {
    const { publicKey, kid } = this.#keys();
    return { keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' }] };
  }

  async sign(
    account: UserAccount,
    clientId: string,
    nowMs: number,
    nonce?: string,
    withEmail = true,
  ): Promise<string> {
    const { privateKey, kid } = this.#keys();
    const iat = Math.floor(nowMs / 1000);
    return new SignJWT({
      azp: clientId,
      ...(withEmail ? { email: account.email, email_verified: true } : {}),
      name: account.name,
      ...(nonce === undefined ? {} : { nonce }),
    })
      .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
      .setIssuer('https://accounts.google.com')
      .setAudience(clientId)
      .setSubject(account.id)
      .setIssuedAt(iat)
      .setExpirationTime(iat + 3600)
      .sign(privateKey);
  }
}
