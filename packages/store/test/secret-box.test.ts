import { randomBytes } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionRepository, keyIdOf, SecretBox, TenancyRepository } from '../src/index.ts';

describe('SecretBox', () => {
  const key = randomBytes(32);
  const box = new SecretBox([key]);
  const binding = { tenantId: 'tnt_a', connectionId: 'con_a' };

  it('seals with AES-256-GCM and opens with the same binding', () => {
    const sealed = box.seal('refresh-token-123', binding);
    expect(sealed.keyId).toBe(keyIdOf(key));
    expect(Buffer.from(sealed.ciphertext).toString('utf8')).not.toContain('refresh-token-123');
    expect(box.open(sealed, binding)).toBe('refresh-token-123');
  });

  it('uses a fresh IV each time', () => {
    const a = box.seal('same', binding);
    const b = box.seal('same', binding);
    expect(Buffer.from(a.ciphertext).equals(Buffer.from(b.ciphertext))).toBe(false);
  });

  it('refuses another tenant or connection as associated data', () => {
    const sealed = box.seal('secret', binding);
    expect(() => box.open(sealed, { tenantId: 'tnt_b', connectionId: 'con_a' })).toThrow(
      /could not be decrypted/,
    );
    expect(() => box.open(sealed, { tenantId: 'tnt_a', connectionId: 'con_b' })).toThrow(
      /could not be decrypted/,
    );
  });

  it('detects tampering', () => {
    const sealed = box.seal('secret', binding);
    const bytes = Buffer.from(sealed.ciphertext);
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 1;
    expect(() => box.open({ keyId: sealed.keyId, ciphertext: bytes }, binding)).toThrow(
      /could not be decrypted/,
    );
  });

  it('rotates: old ciphertexts open with the old key kept second, new ones seal with the new key', () => {
    const oldBox = new SecretBox([key]);
    const sealed = oldBox.seal('secret', binding);
    const newKey = randomBytes(32);
    const rotated = new SecretBox([newKey, key]);
    expect(rotated.open(sealed, binding)).toBe('secret');
    expect(rotated.needsReseal(sealed)).toBe(true);
    expect(rotated.seal('x', binding).keyId).toBe(keyIdOf(newKey));
    expect(() => new SecretBox([newKey]).open(sealed, binding)).toThrow(/unknown key/);
  });

  it('rejects keys of the wrong length', () => {
    expect(() => new SecretBox([randomBytes(16)])).toThrow(/32 bytes/);
  });
});

describe('sealed connection credentials in Postgres', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('a ciphertext copied onto another connection fails to decrypt', async () => {
    const box = new SecretBox([randomBytes(32)]);
    const tenancy = new TenancyRepository(db.prisma);
    const connections = new ConnectionRepository(db.prisma, box);
    const tenant = await tenancy.createTenant('Acme');
    const a = await connections.create(tenant.id, {
      provider: 'google',
      accountEmail: 'a@x.test',
      auth: 'oauth',
    });
    const b = await connections.create(tenant.id, {
      provider: 'google',
      accountEmail: 'b@x.test',
      auth: 'oauth',
    });
    await connections.storeCredentials(tenant.id, a.id, '{"refresh_token":"1//abc"}');
    expect(await connections.readCredentials(tenant.id, a.id)).toBe('{"refresh_token":"1//abc"}');

    const { rows } = await db.pool.query(
      'SELECT credentials_ciphertext, credentials_key_id FROM connections WHERE id = $1',
      [a.id],
    );
    expect(rows[0].credentials_ciphertext.toString('utf8')).not.toContain('1//abc');
    await db.pool.query(
      'UPDATE connections SET credentials_ciphertext = $1, credentials_key_id = $2 WHERE id = $3',
      [rows[0].credentials_ciphertext, rows[0].credentials_key_id, b.id],
    );
    await expect(connections.readCredentials(tenant.id, b.id)).rejects.toThrow(/could not be decrypted/);
  });

  it('reseals every credential with the new master key', async () => {
    const oldKey = randomBytes(32);
    const tenancy = new TenancyRepository(db.prisma);
    const before = new ConnectionRepository(db.prisma, new SecretBox([oldKey]));
    const tenant = await tenancy.createTenant('Rotate');
    const c = await before.create(tenant.id, { provider: 'google', accountEmail: 'r@x.test', auth: 'oauth' });
    await before.storeCredentials(tenant.id, c.id, 'token-r');

    const newKey = randomBytes(32);
    const after = new ConnectionRepository(db.prisma, new SecretBox([newKey, oldKey]));
    const report = await after.resealAll();
    expect(report.resealed).toBe(1);
    // The first test's two rows were sealed with a key this box never had: reported, not touched.
    expect(report.unreadable).toHaveLength(2);
    const onlyNew = new ConnectionRepository(db.prisma, new SecretBox([newKey]));
    expect(await onlyNew.readCredentials(tenant.id, c.id)).toBe('token-r');
  });
});
