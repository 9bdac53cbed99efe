import { createHash } from 'node:crypto';
import { ApiKeyRepository, loadKeyAccessById, OAuthRepository, TenancyRepository } from '@calgate/store';
import { createTestDatabase, type TestDatabase } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failure } from './support.ts';

const A = 'tnt_oa';
const B = 'tnt_ob';
const RESOURCE = 'https://gw.example.com/mcp';
const REDIRECT = 'https://app.example.com/cb';
const verifier = 'v'.repeat(43);
const challenge = createHash('sha256').update(verifier).digest('base64url');

let db: TestDatabase;
let repo: OAuthRepository;
let clientId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  repo = new OAuthRepository(db);
  const p = db.prisma;
  for (const tenant of [A, B]) {
    await p.tenant.create({ data: { id: tenant, name: tenant } });
    await p.user.create({ data: { id: `usr_${tenant}`, tenantId: tenant, email: `${tenant}@example.com` } });
    await p.connection.create({
      data: { id: `con_${tenant}`, tenantId: tenant, provider: 'local', accountEmail: 'local', auth: 'none' },
    });
    await p.calendar.create({
      data: {
        id: `cal_${tenant}`,
        tenantId: tenant,
        connectionId: `con_${tenant}`,
        externalId: 'x',
        summary: 'Main',
        timeZone: 'UTC',
      },
    });
  }
  ({
    client: { clientId },
  } = await repo.registerClient({ clientName: 'Claude', redirectUris: [REDIRECT] }));
});

afterAll(async () => {
  await db.close();
});

const connect = (tenantId = A) =>
  repo.createConnection({
    tenantId,
    userId: `usr_${tenantId}`,
    clientId,
    name: 'Claude',
    toolsets: ['calendar'],
    calendars: [{ calendarId: `cal_${tenantId}`, read: false, write: true }],
  });

const code = (keyId: string, ttlMs?: number) =>
  repo.issueCode({
    tenantId: A,
    keyId,
    clientId,
    redirectUri: REDIRECT,
    codeChallenge: challenge,
    resource: RESOURCE,
    scope: 'mcp',
    ...(ttlMs === undefined ? {} : { ttlMs }),
  });
const redeem = { clientId: '', redirectUri: REDIRECT, codeVerifier: verifier, resource: RESOURCE };

describe('clients', () => {
  it('registers public and confidential clients; the secret is shown once and stored hashed', async () => {
    const pub = await repo.registerClient({ clientName: 'Pub', redirectUris: ['http://127.0.0.1:4000/cb'] });
    expect(pub.clientSecret).toBeUndefined();
    expect(pub.client).toMatchObject({ kind: 'registered', tokenEndpointAuthMethod: 'none' });
    expect(pub.client.clientId).toBe(pub.client.id);
    expect(pub.client.id).toMatch(/^ocl_/);

    const conf = await repo.registerClient({
      clientName: 'Conf',
      redirectUris: [REDIRECT],
      tokenEndpointAuthMethod: 'client_secret_basic',
    });
    const secret = conf.clientSecret ?? '';
    expect(secret).toMatch(/^ocs_[A-Za-z0-9]{32}$/);
    expect(JSON.stringify(conf.client)).not.toContain(secret);
    const again = await repo.getClient(conf.client.clientId);
    expect(again).toEqual(conf.client);
    expect(JSON.stringify(again)).not.toContain('ocs_');
    expect(await repo.verifyClientSecret(conf.client.clientId, secret)).toBe(true);
    // One character changed (never to itself: the secret may already end in "x").
    const altered = `${secret.slice(0, -1)}${secret.endsWith('x') ? 'y' : 'x'}`;
    expect(await repo.verifyClientSecret(conf.client.clientId, altered)).toBe(false);
    expect(await repo.verifyClientSecret(pub.client.clientId, secret)).toBe(false);
    expect(await repo.verifyClientSecret('ocl_missing', secret)).toBe(false);
  });

  it('validates redirect URIs precisely', async () => {
    const bad = async (uri: string, text: string) => {
      const error = await failure(repo.registerClient({ clientName: 'X', redirectUris: [uri] }));
      expect(error.code).toBe('invalid_argument');
      expect(error.context.oauthError).toBe('invalid_redirect_uri');
      expect(error.message).toContain(text);
    };
    await bad('/cb', 'not an absolute URL');
    await bad('https://a.example.com/cb#x', 'fragment');
    await bad('http://a.example.com/cb', 'must use https');
    await bad('myapp://cb', 'must use https');
    await bad(`https://a.example.com/${'a'.repeat(2048)}`, 'at most 2048');
    const many = Array.from({ length: 11 }, (_, i) => `https://a.example.com/${i}`);
    expect((await failure(repo.registerClient({ clientName: 'X', redirectUris: many }))).message).toContain(
      'at most 10',
    );
    expect((await failure(repo.registerClient({ clientName: 'X', redirectUris: [] }))).message).toContain(
      'at least one',
    );
    for (const uri of ['http://localhost:1/cb', 'http://[::1]:2/cb', 'http://127.0.0.1/cb']) {
      await repo.registerClient({ clientName: 'Loop', redirectUris: [uri] });
    }
    const dev = new OAuthRepository(db, { allowHttpRedirects: true });
    await dev.registerClient({ clientName: 'Dev', redirectUris: ['http://dev.internal/cb'] });
  });

  it('saves metadata-document clients, refreshing them, and checks client_id', async () => {
    const url = 'https://app.example.com/oauth/client.json';
    const doc = { client_id: url, client_name: 'App', redirect_uris: [REDIRECT] };
    const first = await repo.saveMetadataDocumentClient(url, doc);
    expect(first).toMatchObject({
      clientId: url,
      kind: 'metadata_document',
      clientName: 'App',
      tokenEndpointAuthMethod: 'none',
    });
    const second = await repo.saveMetadataDocumentClient(url, { ...doc, client_name: 'App 2' });
    expect(second).toMatchObject({ id: first.id, clientName: 'App 2' });
    expect(second.refreshedAt.getTime()).toBeGreaterThanOrEqual(first.refreshedAt.getTime());

    const mismatch = await failure(
      repo.saveMetadataDocumentClient(url, { ...doc, client_id: 'https://evil.example.com/c' }),
    );
    expect(mismatch.context.oauthError).toBe('invalid_client_metadata');
    expect(mismatch.message).toContain('is not the URL it was fetched from');
    const noPath = await failure(
      repo.saveMetadataDocumentClient('https://app.example.com/', {
        ...doc,
        client_id: 'https://app.example.com/',
      }),
    );
    expect(noPath.message).toContain('must have a path');
    const badUri = await failure(
      repo.saveMetadataDocumentClient(url, { ...doc, redirect_uris: ['http://x.example.com/'] }),
    );
    expect(badUri.context.oauthError).toBe('invalid_redirect_uri');
  });
});

describe('connections', () => {
  it('is an api_keys row of kind oauth with grants (write implies read), hidden from key listings', async () => {
    const keyId = await connect();
    const access = await loadKeyAccessById(db, A, keyId);
    expect(access?.toolsets).toEqual(['calendar']);
    expect(access?.calendars.map((c) => [c.id, c.canRead, c.canWrite])).toEqual([[`cal_${A}`, true, true]]);
    expect((await new ApiKeyRepository(db.prisma).list(A)).map((k) => k.id)).not.toContain(keyId);
    const listed = await repo.listConnections(A);
    expect(listed.find((c) => c.keyId === keyId)).toMatchObject({
      clientId,
      clientName: 'Claude',
      userId: `usr_${A}`,
      revokedAt: null,
    });
    expect((await repo.listConnections(B)).filter((c) => c.keyId === keyId)).toEqual([]);
  });

  it("approving the same app again updates the person's live connection instead of adding one", async () => {
    const first = await connect(B);
    const again = await repo.createConnection({
      tenantId: B,
      userId: `usr_${B}`,
      clientId,
      name: 'Claude',
      toolsets: ['calendar', 'search'],
      calendars: [{ calendarId: `cal_${B}`, read: true, write: false }],
    });
    expect(again).toBe(first);
    const access = await loadKeyAccessById(db, B, first);
    expect(access?.toolsets).toEqual(['calendar', 'search']);
    expect(access?.calendars.map((c) => [c.id, c.canRead, c.canWrite])).toEqual([[`cal_${B}`, true, false]]);
    expect((await repo.listConnections(B)).filter((c) => c.revokedAt === null)).toHaveLength(1);
    await repo.revokeConnection(B, first);
    expect(await connect(B)).not.toBe(first);
  });

  it('keeps a hijack policy per connection: chosen at consent, kept on approving again, set later', async () => {
    const other = (
      await repo.registerClient({ clientName: 'Policy app', redirectUris: ['https://policy.example.com/cb'] })
    ).client.clientId;
    const approve = (hijackPolicy?: 'strict' | 'ask' | 'off') =>
      repo.createConnection({
        tenantId: A,
        userId: `usr_${A}`,
        clientId: other,
        name: 'Policy app',
        toolsets: ['calendar'],
        calendars: [{ calendarId: `cal_${A}`, read: true, write: true }],
        ...(hijackPolicy === undefined ? {} : { hijackPolicy }),
      });
    const policyOf = async (keyId: string) => ({
      listed: (await repo.listConnections(A)).find((c) => c.keyId === keyId)?.hijackPolicy,
      access: (await loadKeyAccessById(db, A, keyId))?.hijackPolicy,
    });
    const keyId = await approve('strict');
    expect(await policyOf(keyId)).toEqual({ listed: 'strict', access: 'strict' });
    // Approving again without a choice keeps it; with one, replaces it.
    expect(await approve()).toBe(keyId);
    expect(await policyOf(keyId)).toEqual({ listed: 'strict', access: 'strict' });
    expect(await approve('off')).toBe(keyId);
    expect(await policyOf(keyId)).toEqual({ listed: 'off', access: 'off' });

    await repo.setHijackPolicy(A, keyId, 'ask');
    expect(await policyOf(keyId)).toEqual({ listed: 'ask', access: 'ask' });
    const bad = await failure(repo.setHijackPolicy(A, keyId, 'lax'));
    expect(bad.code).toBe('invalid_argument');
    expect(bad.message).toBe("Unknown hijack policy 'lax'; use one of strict, ask, off.");
    expect((await failure(approve('lax' as 'off'))).code).toBe('invalid_argument');
    expect((await failure(repo.setHijackPolicy(B, keyId, 'off'))).code).toBe('not_found');
    const plain = await new ApiKeyRepository(db.prisma).create(A, { name: 'not an app' });
    expect((await failure(repo.setHijackPolicy(A, plain.key.id, 'off'))).code).toBe('not_found');
    expect(await policyOf(keyId)).toEqual({ listed: 'ask', access: 'ask' });

    await repo.revokeConnection(A, keyId);
    const revoked = await failure(repo.setHijackPolicy(A, keyId, 'off'));
    expect(revoked.code).toBe('conflict');
    expect((await policyOf(keyId)).listed).toBe('ask');
    // A new connection of the same person and app starts from the default.
    const fresh = await approve();
    expect(fresh).not.toBe(keyId);
    expect((await policyOf(fresh)).listed).toBe('ask');
  });

  it('is never swept into new calendars granted to all keys, nor rotated into a key', async () => {
    const keyId = await connect();
    const plain = await new ApiKeyRepository(db.prisma).create(A, { name: 'plain' });
    const extra = await db.prisma.calendar.create({
      data: {
        id: 'cal_extra',
        tenantId: A,
        connectionId: `con_${A}`,
        externalId: 'y',
        summary: 'Extra',
        timeZone: 'UTC',
      },
    });
    await new TenancyRepository(db.prisma).grantCalendars(A, [extra], 'write');
    expect((await loadKeyAccessById(db, A, keyId))?.calendars.map((c) => c.id)).toEqual([`cal_${A}`]);
    expect((await loadKeyAccessById(db, A, plain.key.id))?.calendars.map((c) => c.id)).toEqual(['cal_extra']);
    expect(await new ApiKeyRepository(db.prisma).rotate(A, keyId)).toBeNull();
  });

  it("refuses another tenant's calendar, user and connection as not found", async () => {
    const cal = await failure(
      repo.createConnection({
        tenantId: A,
        userId: `usr_${A}`,
        clientId,
        name: 'X',
        toolsets: ['calendar'],
        calendars: [{ calendarId: `cal_${B}`, read: true, write: false }],
      }),
    );
    expect(cal.code).toBe('not_found');
    const user = await failure(
      repo.createConnection({
        tenantId: A,
        userId: `usr_${B}`,
        clientId,
        name: 'X',
        toolsets: ['calendar'],
        calendars: [],
      }),
    );
    expect(user.code).toBe('not_found');
    const keyId = await connect(B);
    expect((await failure(repo.revokeConnection(A, keyId))).code).toBe('not_found');
    expect((await failure(repo.revokeConnection(A, 'key_missing'))).code).toBe('not_found');
  });
});

describe('codes', () => {
  it('redeems once; of two concurrent redemptions exactly one wins', async () => {
    const keyId = await connect();
    const c = await code(keyId);
    const results = await Promise.allSettled([
      repo.consumeCode(c, { ...redeem, clientId }),
      repo.consumeCode(c, { ...redeem, clientId }),
    ]);
    const won = results.filter((r) => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    expect(won[0]?.value).toEqual({ tenantId: A, keyId, scope: 'mcp' });
  });

  it('refuses PKCE, client, redirect and resource mismatches, expiry and replay (which revokes refresh tokens)', async () => {
    const keyId = await connect();
    const refusal = async (presented: Partial<typeof redeem>, text: string, ttlMs?: number) => {
      const error = await failure(
        repo.consumeCode(await code(keyId, ttlMs), { ...redeem, clientId, ...presented }),
      );
      expect(error.code).toBe('invalid_argument');
      expect(error.context.oauthError).toBe('invalid_grant');
      expect(error.message).toContain(text);
    };
    await refusal({ codeVerifier: 'w'.repeat(43) }, 'PKCE');
    await refusal({ clientId: 'ocl_other' }, 'not issued to client');
    await refusal({ redirectUri: 'https://app.example.com/other' }, 'Redirect URI differs');
    await refusal({ resource: 'https://other.example.com/mcp' }, 'Resource');
    const short = await code(keyId, 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await failure(repo.consumeCode(short, { ...redeem, clientId }))).message).toContain('expired');
    expect((await failure(repo.consumeCode('nope', { ...redeem, clientId }))).message).toContain('Unknown');

    const c = await code(keyId);
    await repo.consumeCode(c, { ...redeem, clientId });
    const token = await repo.issueRefreshToken({ tenantId: A, keyId, clientId, resource: RESOURCE });
    expect((await failure(repo.consumeCode(c, { ...redeem, clientId }))).message).toContain('already used');
    expect(
      (await failure(repo.rotateRefreshToken(token, { clientId, resource: RESOURCE }))).message,
    ).toContain('revoked');
  });

  it('refuses an S256 challenge of the wrong shape and an unregistered redirect URI', async () => {
    const keyId = await connect();
    const base = {
      tenantId: A,
      keyId,
      clientId,
      redirectUri: REDIRECT,
      codeChallenge: challenge,
      resource: RESOURCE,
      scope: '',
    };
    expect((await failure(repo.issueCode({ ...base, codeChallenge: 'plain' }))).message).toContain('S256');
    expect(
      (await failure(repo.issueCode({ ...base, redirectUri: 'https://x.example.com/' }))).message,
    ).toContain('not registered');
    expect((await failure(repo.issueCode({ ...base, tenantId: B }))).code).toBe('not_found');
  });
});

describe('refresh tokens', () => {
  it('rotates, and a reused token revokes its whole family', async () => {
    const keyId = await connect();
    const first = await repo.issueRefreshToken({ tenantId: A, keyId, clientId, resource: RESOURCE });
    expect(first).toMatch(/^ocr_/);
    const { newToken: second, ...who } = await repo.rotateRefreshToken(first, {
      clientId,
      resource: RESOURCE,
    });
    expect(who).toEqual({ tenantId: A, keyId });
    const { newToken: third } = await repo.rotateRefreshToken(second, { clientId, resource: RESOURCE });
    const reuse = await failure(repo.rotateRefreshToken(first, { clientId, resource: RESOURCE }));
    expect(reuse.context.oauthError).toBe('invalid_grant');
    expect(reuse.message).toContain('already used');
    expect(
      (await failure(repo.rotateRefreshToken(third, { clientId, resource: RESOURCE }))).message,
    ).toContain('revoked');

    const other = await repo.issueRefreshToken({ tenantId: A, keyId, clientId, resource: RESOURCE });
    expect(
      (await failure(repo.rotateRefreshToken(other, { clientId: 'ocl_x', resource: RESOURCE }))).message,
    ).toContain('not issued');
    expect(
      (await failure(repo.rotateRefreshToken(other, { clientId, resource: 'https://o.example.com' })))
        .message,
    ).toContain('Resource');
    const expiring = await repo.issueRefreshToken({
      tenantId: A,
      keyId,
      clientId,
      resource: RESOURCE,
      ttlMs: 1,
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(
      (await failure(repo.rotateRefreshToken(expiring, { clientId, resource: RESOURCE }))).message,
    ).toContain('expired');
  });

  it('revoking a connection revokes the key and its refresh tokens', async () => {
    const keyId = await connect();
    const token = await repo.issueRefreshToken({ tenantId: A, keyId, clientId, resource: RESOURCE });
    await repo.revokeConnection(A, keyId);
    expect((await loadKeyAccessById(db, A, keyId))?.revokedAt).toBeInstanceOf(Date);
    expect(
      (await failure(repo.rotateRefreshToken(token, { clientId, resource: RESOURCE }))).message,
    ).toContain('revoked');
    expect((await failure(code(keyId))).code).toBe('conflict');
    const { rows } = await db.pool.query(
      'SELECT 1 FROM oauth_refresh_tokens WHERE key_id = $1 AND revoked_at IS NULL',
      [keyId],
    );
    expect(rows).toHaveLength(0);
  });

  it('revokes a family through one of its tokens, for its own client only', async () => {
    const keyId = await connect();
    const token = await repo.issueRefreshToken({ tenantId: A, keyId, clientId, resource: RESOURCE });
    const { newToken } = await repo.rotateRefreshToken(token, { clientId, resource: RESOURCE });
    expect(await repo.revokeRefreshTokenFamily(token, 'ocl_someoneelse')).toBe(false);
    expect(await repo.revokeRefreshTokenFamily(token, clientId)).toBe(true);
    expect(
      (await failure(repo.rotateRefreshToken(newToken, { clientId, resource: RESOURCE }))).message,
    ).toContain('revoked');
  });

  it('prunes codes and refresh tokens a day after they expired, keeping younger ones', async () => {
    const keyId = await connect();
    const old = await repo.issueRefreshToken({ tenantId: A, keyId, clientId, resource: RESOURCE, ttlMs: 1 });
    const live = await repo.issueRefreshToken({ tenantId: A, keyId, clientId, resource: RESOURCE });
    await code(keyId, 1);
    const later = new Date(Date.now() + 25 * 60 * 60 * 1000);
    const pruned = await repo.pruneExpired(later);
    expect(pruned.codes).toBeGreaterThanOrEqual(1);
    expect(pruned.refreshTokens).toBeGreaterThanOrEqual(1);
    expect((await failure(repo.rotateRefreshToken(old, { clientId, resource: RESOURCE }))).message).toContain(
      'Unknown',
    );
    expect((await repo.rotateRefreshToken(live, { clientId, resource: RESOURCE })).keyId).toBe(keyId);
  });

  it('removes a connection whose code was never redeemed, and keeps one in use', async () => {
    for (const live of (await repo.listConnections(A)).filter((c) => c.revokedAt === null)) {
      await repo.revokeConnection(A, live.keyId);
    }
    const unredeemed = await connect();
    await code(unredeemed, 1);
    const exists = async (keyId: string) =>
      (await db.pool.query('SELECT 1 FROM api_keys WHERE id = $1', [keyId])).rowCount === 1;
    const grants = async (keyId: string) =>
      (await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM grants WHERE key_id = $1', [keyId]))
        .rows[0]?.n;
    expect(await grants(unredeemed)).toBe(1);
    // Within its first day it stays (the app may still be on its way back with the code).
    await repo.pruneExpired(new Date());
    expect(await exists(unredeemed)).toBe(true);
    await repo.revokeConnection(A, unredeemed);
    const used = await connect();
    expect(used).not.toBe(unredeemed);
    await repo.issueRefreshToken({ tenantId: A, keyId: used, clientId, resource: RESOURCE });
    const pruned = await repo.pruneExpired(new Date(Date.now() + 25 * 60 * 60 * 1000));
    expect(pruned.connections).toBeGreaterThanOrEqual(1);
    expect(await exists(unredeemed)).toBe(false);
    expect(await grants(unredeemed)).toBe(0);
    expect(await exists(used)).toBe(true);
  });
});

describe('prisma schema', () => {
  it('reads the oauth tables and api_keys columns through the generated client', async () => {
    const p = db.prisma;
    // A connection of its own, not the live one earlier tests approved (approving again reuses it).
    for (const live of (await repo.listConnections(A)).filter((c) => c.revokedAt === null)) {
      await repo.revokeConnection(A, live.keyId);
    }
    const keyId = await connect();
    await code(keyId);
    await repo.issueRefreshToken({ tenantId: A, keyId, clientId, resource: RESOURCE });
    const key = await p.apiKey.findUniqueOrThrow({
      where: { id: keyId },
      include: { oauthClient: true, user: true, oauthCodes: true, oauthRefreshTokens: true },
    });
    expect(key).toMatchObject({
      kind: 'oauth',
      userId: `usr_${A}`,
      oauthClient: { clientId, kind: 'registered' },
    });
    expect(key.oauthCodes[0]).toMatchObject({
      codeChallenge: challenge,
      resource: RESOURCE,
      scope: 'mcp',
      usedAt: null,
    });
    expect(key.oauthRefreshTokens[0]).toMatchObject({ resource: RESOURCE, usedAt: null, revokedAt: null });
    expect(key.oauthRefreshTokens[0]?.hash).toHaveLength(32);
  });
});
