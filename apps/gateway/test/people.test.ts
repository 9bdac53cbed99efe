import { randomBytes } from 'node:crypto';
import { OAuthRepository } from '@calgate/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passwordResetLink } from '../src/cli/people.ts';
import { main } from '../src/cli.ts';
import { type Browser, call, signIn, uniqueEmail } from './api-client.ts';
import { startTestGateway, type TestGateway } from './harness.ts';

const PASSWORD = 'correct horse battery';
const ENCRYPTION_KEY = randomBytes(32).toString('base64');

function tokenOf(link: string): string {
  return new URL(link).searchParams.get('token') ?? '';
}

function browserOf(response: {
  headers: Headers;
  body: { csrfToken: string; tenant: { id: string }; user: { id: string } };
}): Browser {
  return {
    cookie: (response.headers.get('set-cookie') ?? '').split(';')[0] as string,
    csrf: response.body.csrfToken,
    tenantId: response.body.tenant.id,
    userId: response.body.user.id,
  };
}

describe('people: roles, invitations and reset links', () => {
  let gw: TestGateway;
  let owner: Browser;
  let ownerEmail: string;

  /** Invites `email` as `role` and accepts the link; the new person's browser. */
  async function join(role: string, email = uniqueEmail(role)): Promise<Browser> {
    const invited = await call(gw, 'POST', '/api/v1/invitations', { as: owner, body: { email, role } });
    expect(invited.status).toBe(201);
    const accepted = await call(gw, 'POST', '/api/v1/invitations/accept', {
      body: { token: tokenOf(invited.body.link), password: PASSWORD },
    });
    expect(accepted.status).toBe(201);
    return browserOf(accepted);
  }

  beforeAll(async () => {
    gw = await startTestGateway({ ENCRYPTION_KEY });
    ownerEmail = uniqueEmail('owner');
    const signup = await call(gw, 'POST', '/api/v1/auth/signup', {
      body: { email: ownerEmail, password: PASSWORD },
    });
    expect(signup.status).toBe(201);
    owner = await signIn(gw, ownerEmail, PASSWORD);
  });

  afterAll(async () => {
    await gw?.stop();
  });

  describe('.happy', () => {
    it('invites a member who accepts, is signed in, and signs in again with the password', async () => {
      const me = await call(gw, 'GET', '/api/v1/auth/me', { as: owner });
      expect(me.body.user.role).toBe('owner');

      const email = uniqueEmail('mia');
      const invited = await call(gw, 'POST', '/api/v1/invitations', {
        as: owner,
        body: { email, role: 'member' },
      });
      expect(invited.status).toBe(201);
      expect(invited.body.link).toMatch(/^http:\/\/calgate\.test\/invite\?token=[A-Za-z0-9_-]{43}$/);
      expect(invited.body.sent).toBe(false);
      const token = tokenOf(invited.body.link);
      // Only the hash is stored; the invitation expires in 7 days.
      const { rows } = await gw.db.pool.query(
        `SELECT token_hash, extract(epoch FROM expires_at - created_at)::int AS ttl FROM invitations WHERE id = $1`,
        [invited.body.invitation.id],
      );
      expect(Buffer.from(rows[0].token_hash).toString('base64url')).not.toBe(token);
      expect(rows[0].ttl).toBe(7 * 24 * 3600);

      const lookup = await call(gw, 'GET', `/api/v1/invitations/lookup?token=${token}`);
      expect(lookup.status).toBe(200);
      expect(lookup.body).toMatchObject({ email, role: 'member', tenant: { name: 'My Calgate' } });

      const listed = await call(gw, 'GET', '/api/v1/members', { as: owner });
      expect(listed.body.invitations.map((i: { email: string }) => i.email)).toContain(email);

      const accepted = await call(gw, 'POST', '/api/v1/invitations/accept', {
        body: { token, password: PASSWORD },
      });
      expect(accepted.status).toBe(201);
      expect(accepted.headers.get('set-cookie')).toMatch(/calgate_session=/);
      const mia = browserOf(accepted);
      const miaMe = await call(gw, 'GET', '/api/v1/auth/me', { as: mia });
      expect(miaMe.body).toMatchObject({ user: { email, role: 'member' }, tenant: { id: owner.tenantId } });
      // The CSRF token from accept works for a write.
      expect((await call(gw, 'POST', '/api/v1/keys', { as: mia, body: { name: 'mia agent' } })).status).toBe(
        201,
      );
      const again = await signIn(gw, email, PASSWORD);
      expect(again.tenantId).toBe(owner.tenantId);

      const members = await call(gw, 'GET', '/api/v1/members', { as: mia });
      expect(members.body.members.map((m: { email: string; role: string }) => [m.email, m.role])).toEqual(
        expect.arrayContaining([
          [ownerEmail, 'owner'],
          [email, 'member'],
        ]),
      );
    });

    it('lets members manage only the keys they created', async () => {
      const mia = await join('member');
      const own = await call(gw, 'POST', '/api/v1/keys', { as: mia, body: { name: 'own' } });
      const other = await call(gw, 'POST', '/api/v1/keys', { as: owner, body: { name: 'owner key' } });
      const { rows } = await gw.db.pool.query('SELECT created_by FROM api_keys WHERE id = $1', [
        own.body.key.id,
      ]);
      expect(rows[0].created_by).toBe(mia.userId);

      const refused = await call(gw, 'POST', `/api/v1/keys/${other.body.key.id}/revoke`, { as: mia });
      expect(refused.status).toBe(403);
      expect(refused.body.error.message).toBe('Members can revoke only the keys they created.');
      const rotate = await call(gw, 'POST', `/api/v1/keys/${other.body.key.id}/rotate`, {
        as: mia,
        body: {},
      });
      expect(rotate.body.error.message).toBe('Members can rotate only the keys they created.');
      expect((await call(gw, 'POST', `/api/v1/keys/${own.body.key.id}/revoke`, { as: mia })).status).toBe(
        200,
      );
      // Connected apps: a member disconnects the ones they approved, not others'.
      const oauth = new OAuthRepository(gw.db);
      const { client } = await oauth.registerClient({
        clientName: 'Claude',
        redirectUris: ['https://claude.ai/cb'],
      });
      const connect = (userId: string) =>
        oauth.createConnection({
          tenantId: owner.tenantId,
          userId,
          clientId: client.clientId,
          name: 'Claude',
          toolsets: ['calendar'],
          calendars: [],
        });
      const ownersApp = await connect(owner.userId);
      const miasApp = await connect(mia.userId);
      const notMine = await call(gw, 'POST', `/api/v1/connected-apps/${ownersApp}/revoke`, { as: mia });
      expect(notMine.status).toBe(403);
      expect(notMine.body.error.message).toBe('Members can disconnect only the apps they connected.');
      const notMyPolicy = await call(gw, 'PATCH', `/api/v1/connected-apps/${ownersApp}`, {
        as: mia,
        body: { hijackPolicy: 'off' },
      });
      expect(notMyPolicy.status).toBe(403);
      expect(notMyPolicy.body.error.message).toBe(
        'Members can change the hijack policy of only the apps they connected.',
      );
      const myPolicy = await call(gw, 'PATCH', `/api/v1/connected-apps/${miasApp}`, {
        as: mia,
        body: { hijackPolicy: 'strict' },
      });
      expect(myPolicy.status).toBe(200);
      expect(myPolicy.body.app.hijackPolicy).toBe('strict');
      expect((await call(gw, 'POST', `/api/v1/connected-apps/${miasApp}/revoke`, { as: mia })).status).toBe(
        200,
      );

      const grants = await call(gw, 'PUT', '/api/v1/grants', { as: mia, body: {} });
      expect(grants.status).toBe(403);
      expect(grants.body.error.message).toMatch(/^Members cannot change grants/);
    });
  });

  describe('.error', () => {
    it('refuses a used, revoked or expired invitation link with its own message', async () => {
      const used = await call(gw, 'POST', '/api/v1/invitations', {
        as: owner,
        body: { email: uniqueEmail('used'), role: 'auditor' },
      });
      const token = tokenOf(used.body.link);
      expect(
        (await call(gw, 'POST', '/api/v1/invitations/accept', { body: { token, password: PASSWORD } }))
          .status,
      ).toBe(201);
      const reuse = await call(gw, 'POST', '/api/v1/invitations/accept', {
        body: { token, password: PASSWORD },
      });
      expect(reuse.status).toBe(400);
      expect(reuse.body.error.message).toMatch(/already used/);

      const revoked = await call(gw, 'POST', '/api/v1/invitations', {
        as: owner,
        body: { email: uniqueEmail('rev'), role: 'member' },
      });
      expect(
        (await call(gw, 'POST', `/api/v1/invitations/${revoked.body.invitation.id}/revoke`, { as: owner }))
          .status,
      ).toBe(200);
      const afterRevoke = await call(
        gw,
        'GET',
        `/api/v1/invitations/lookup?token=${tokenOf(revoked.body.link)}`,
      );
      expect(afterRevoke.status).toBe(400);
      expect(afterRevoke.body.error.message).toMatch(/withdrawn/);

      const expired = await call(gw, 'POST', '/api/v1/invitations', {
        as: owner,
        body: { email: uniqueEmail('exp'), role: 'member' },
      });
      await gw.db.pool.query(
        `UPDATE invitations SET expires_at = now() - interval '1 second' WHERE id = $1`,
        [expired.body.invitation.id],
      );
      const late = await call(gw, 'POST', '/api/v1/invitations/accept', {
        body: { token: tokenOf(expired.body.link), password: PASSWORD },
      });
      expect(late.status).toBe(400);
      expect(late.body.error.message).toMatch(/expired/);

      const bogus = await call(gw, 'GET', '/api/v1/invitations/lookup?token=nope');
      expect(bogus.status).toBe(400);
      expect(bogus.body.error.message).toMatch(/not valid/);
      const short = await call(gw, 'POST', '/api/v1/invitations/accept', {
        body: { token: tokenOf(expired.body.link), password: 'short' },
      });
      expect(short.status).toBe(400);
      expect(short.body.error.message).toMatch(/at least 12 characters/);
    });

    it('refuses inviting someone who already signs in', async () => {
      const again = await call(gw, 'POST', '/api/v1/invitations', {
        as: owner,
        body: { email: ownerEmail, role: 'member' },
      });
      expect(again.status).toBe(409);
    });
  });

  describe('.security', () => {
    it('keeps the last owner, and keeps admins away from owners', async () => {
      const selfDemote = await call(gw, 'PATCH', `/api/v1/members/${owner.userId}`, {
        as: owner,
        body: { role: 'admin' },
      });
      expect(selfDemote.status).toBe(403);
      expect(selfDemote.body.error.message).toMatch(/last owner/);
      const selfRemove = await call(gw, 'DELETE', `/api/v1/members/${owner.userId}`, { as: owner });
      expect(selfRemove.status).toBe(403);
      expect(selfRemove.body.error.message).toMatch(/last owner/);

      const ada = await join('admin');
      const demote = await call(gw, 'PATCH', `/api/v1/members/${owner.userId}`, {
        as: ada,
        body: { role: 'member' },
      });
      expect(demote.status).toBe(403);
      expect(demote.body.error.message).toBe('Only owners can change or remove an owner.');
      const inviteOwner = await call(gw, 'POST', '/api/v1/invitations', {
        as: ada,
        body: { email: uniqueEmail('o2'), role: 'owner' },
      });
      expect(inviteOwner.status).toBe(403);
      expect(inviteOwner.body.error.message).toBe('Only owners can make someone an owner.');

      // With a second owner, the first may step down.
      const promoted = await call(gw, 'PATCH', `/api/v1/members/${ada.userId}`, {
        as: owner,
        body: { role: 'owner' },
      });
      expect(promoted.status).toBe(200);
      expect(promoted.body.member.role).toBe('owner');
      const back = await call(gw, 'PATCH', `/api/v1/members/${ada.userId}`, {
        as: owner,
        body: { role: 'admin' },
      });
      expect(back.status).toBe(200);
    });

    it('removing a member ends their sessions and revokes their keys', async () => {
      const max = await join('member');
      const key = await call(gw, 'POST', '/api/v1/keys', { as: max, body: { name: 'max agent' } });
      expect(key.status).toBe(201);
      const removed = await call(gw, 'DELETE', `/api/v1/members/${max.userId}`, { as: owner });
      expect(removed.status).toBe(200);
      expect(removed.body.keysRevoked).toBe(1);
      expect((await call(gw, 'GET', '/api/v1/keys', { as: max })).status).toBe(401);
      const { rows } = await gw.db.pool.query('SELECT revoked_at FROM api_keys WHERE id = $1', [
        key.body.key.id,
      ]);
      expect(rows[0].revoked_at).not.toBeNull();
      const mcp = await fetch(gw.mcpUrl, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.body.secret}`, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(mcp.status).toBe(401);
    });

    it('resets a password from a CLI link: single-use, ends every session, signs in', async () => {
      const rae = uniqueEmail('rae');
      const raeBrowser = await join('member', rae);
      const { link, sent } = await passwordResetLink(
        gw.runtime.db,
        { publicUrl: 'http://calgate.test', smtp: { url: undefined, from: 'x@y.z' } },
        rae,
      );
      expect(sent).toBe(false);
      expect(link).toMatch(/^http:\/\/calgate\.test\/reset\?token=/);
      const NEW = 'a brand new password';
      const reset = await call(gw, 'POST', '/api/v1/auth/reset', {
        body: { token: tokenOf(link), password: NEW },
      });
      expect(reset.status).toBe(200);
      const fresh = browserOf(reset);
      expect((await call(gw, 'GET', '/api/v1/auth/me', { as: fresh })).status).toBe(200);
      expect((await call(gw, 'GET', '/api/v1/auth/me', { as: raeBrowser })).status).toBe(401);
      await expect(signIn(gw, rae, PASSWORD)).rejects.toThrow(/401/);
      await signIn(gw, rae, NEW);
      const reuse = await call(gw, 'POST', '/api/v1/auth/reset', {
        body: { token: tokenOf(link), password: NEW },
      });
      expect(reuse.status).toBe(400);
      expect(reuse.body.error.message).toMatch(/already used/);

      // Through the CLI itself: a link on stdout, and a clear exit 1 for an unknown email.
      let out = '';
      let err = '';
      const env = { DATABASE_URL: gw.db.url, ENCRYPTION_KEY, PUBLIC_URL: 'http://calgate.test' };
      const io = { out: (t: string) => (out += t), err: (t: string) => (err += t) };
      expect(await main(['user', 'reset-password', '--email', rae], env, io)).toBe(0);
      expect(out).toMatch(/http:\/\/calgate\.test\/reset\?token=[A-Za-z0-9_-]{43}/);
      expect(await main(['user', 'reset-password', '--email', 'nobody@example.test'], env, io)).toBe(1);
      expect(err).toContain('No Calgate user signs in with nobody@example.test.');

      const expired = await passwordResetLink(
        gw.runtime.db,
        { publicUrl: 'http://calgate.test', smtp: { url: undefined, from: 'x@y.z' } },
        rae,
      );
      await gw.db.pool.query(
        `UPDATE password_resets SET expires_at = now() - interval '1 second' WHERE used_at IS NULL`,
      );
      const late = await call(gw, 'POST', '/api/v1/auth/reset', {
        body: { token: tokenOf(expired.link), password: NEW },
      });
      expect(late.status).toBe(400);
      expect(late.body.error.message).toMatch(/expired/);
    });

    it('creates another tenant with an owner invitation from the CLI', async () => {
      let out = '';
      const env = { DATABASE_URL: gw.db.url, ENCRYPTION_KEY, PUBLIC_URL: 'http://calgate.test' };
      const io = { out: (t: string) => (out += t), err: () => undefined };
      const email = uniqueEmail('globex-owner');
      expect(
        await main(['tenant', 'create', '--name', 'Globex', '--owner-email', email, '--json'], env, io),
      ).toBe(0);
      const printed = JSON.parse(out) as { id: string; link: string };
      const accepted = await call(gw, 'POST', '/api/v1/invitations/accept', {
        body: { token: tokenOf(printed.link), password: PASSWORD },
      });
      expect(accepted.status).toBe(201);
      const boss = browserOf(accepted);
      expect(boss.tenantId).toBe(printed.id);
      const me = await call(gw, 'GET', '/api/v1/auth/me', { as: boss });
      expect(me.body).toMatchObject({ user: { role: 'owner' }, tenant: { name: 'Globex' } });
      // Each tenant sees only its own people.
      const members = await call(gw, 'GET', '/api/v1/members', { as: boss });
      expect(members.body.members.map((m: { email: string }) => m.email)).toEqual([email]);
    });
  });
});
