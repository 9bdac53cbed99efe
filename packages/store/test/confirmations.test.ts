import { ApiKeyRepository, CONFIRMATION_TTL_MS, ConfirmationRepository } from '@calgate/store';
import { createTestDatabase, type TestDatabase } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe('ConfirmationRepository (Postgres)', () => {
  let db: TestDatabase;
  let confirmations: ConfirmationRepository;
  let keyId: string;
  let otherKey: string;
  const input = {
    tool: 'delete_event',
    argsHash: 'hash-1',
    calendarIds: ['cal_1'],
    action: 'delete event e1',
    preceded: ['event e0: organised by a@b.test, outside your organisation'],
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.prisma.tenant.createMany({
      data: [
        { id: 'tnt_a', name: 'A' },
        { id: 'tnt_b', name: 'B' },
      ],
    });
    const keys = new ApiKeyRepository(db.prisma);
    keyId = (await keys.create('tnt_a', { name: 'agent' })).key.id;
    otherKey = (await keys.create('tnt_a', { name: 'other' })).key.id;
    confirmations = new ConfirmationRepository(db.prisma);
  });
  afterAll(async () => {
    await db.close();
  });

  it('is used once, only after approval, only by its key for exactly its call', async () => {
    const { id, expiresAt } = await confirmations.create('tnt_a', keyId, input);
    expect(id).toMatch(/^cnf_/);
    expect(expiresAt.getTime() - Date.now()).toBeGreaterThan(CONFIRMATION_TTL_MS - 60_000);
    expect(await confirmations.use('tnt_a', keyId, id, 'delete_event', 'hash-1')).toBe('pending');
    expect((await confirmations.pending('tnt_a')).map((row) => row.id)).toEqual([id]);
    expect(await confirmations.pending('tnt_b')).toEqual([]);
    // Another tenant cannot decide it; it reads as missing.
    await expect(confirmations.decide('tnt_b', id, 'usr_b', true)).rejects.toThrow(/No confirmation/);
    const approved = await confirmations.decide('tnt_a', id, 'usr_a', true);
    expect(approved).toMatchObject({ status: 'approved', decidedBy: 'usr_a', key: { name: 'agent' } });
    await expect(confirmations.decide('tnt_a', id, 'usr_a', false)).rejects.toThrow(/already approved/);
    expect(await confirmations.use('tnt_a', otherKey, id, 'delete_event', 'hash-1')).toBe('unknown');
    expect(await confirmations.use('tnt_a', keyId, id, 'delete_event', 'hash-2')).toBe('mismatch');
    expect(await confirmations.use('tnt_a', keyId, id, 'update_event', 'hash-1')).toBe('mismatch');
    expect(await confirmations.use('tnt_a', keyId, id, 'delete_event', 'hash-1')).toBe('ok');
    expect(await confirmations.use('tnt_a', keyId, id, 'delete_event', 'hash-1')).toBe('used');
    expect(await confirmations.pending('tnt_a')).toEqual([]);
  });

  it('expires: neither approved nor used late', async () => {
    const then = new Date(Date.now() - CONFIRMATION_TTL_MS - 1000);
    const late = await confirmations.create('tnt_a', keyId, input, then);
    await expect(confirmations.decide('tnt_a', late.id, 'usr_a', true)).rejects.toThrow(/is expired/);
    expect(await confirmations.use('tnt_a', keyId, late.id, 'delete_event', 'hash-1')).toBe('unknown');
    const soon = await confirmations.create('tnt_a', keyId, input);
    await confirmations.decide('tnt_a', soon.id, 'usr_a', true);
    const after = new Date(soon.expiresAt.getTime() + 1);
    expect(await confirmations.use('tnt_a', keyId, soon.id, 'delete_event', 'hash-1', after)).toBe('unknown');
  });

  it('a declined one stays declined', async () => {
    const { id } = await confirmations.create('tnt_a', keyId, input);
    expect((await confirmations.decide('tnt_a', id, 'usr_a', false)).status).toBe('declined');
    expect(await confirmations.use('tnt_a', keyId, id, 'delete_event', 'hash-1')).toBe('declined');
  });
});
