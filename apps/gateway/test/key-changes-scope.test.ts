/**
 * Key changes reach the other gateways through Redis as the tenant they concern, never as key
 * material: a gateway drops and re-checks only what it holds of that tenant, and does nothing for
 * a tenant it holds nothing of.
 */

import { connectRedis, redisReady } from '@calgate/locks';
import { hashApiKey } from '@calgate/store';
import { redisUrl, until } from '@calgate/testkit';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, sessionFor } from './api-client.ts';
import { connectClient, startTestGateway, type TestGateway } from './harness.ts';

const KEY_CHANGES_CHANNEL = 'calgate:key-changes';

let first: TestGateway;
let second: TestGateway;
let subscriber: Redis;
const messages: string[] = [];

beforeAll(async () => {
  subscriber = connectRedis(redisUrl(), { name: 'key-changes-test' });
  await redisReady(subscriber, 5_000);
  subscriber.on('message', (_channel: string, payload: string) => messages.push(payload));
  await subscriber.subscribe(KEY_CHANGES_CHANNEL);
  first = await startTestGateway();
  second = await startTestGateway({}, { db: first.db });
}, 60_000);

afterAll(async () => {
  subscriber?.disconnect();
  await second?.stop();
  await first?.stop();
});

describe('key changes between gateways', () => {
  it('carry the tenant id and no secret or hash; only a gateway holding that tenant does work', async () => {
    const held = await first.seedTenant('Held by the second');
    const notHeld = await first.seedTenant('Not held by the second');
    const { key: spare, secret: spareSecret } = await first.runtime.keys.create(notHeld.tenantId, {
      name: 'spare',
    });
    // The second gateway has looked up a key of `held` only.
    const client = await connectClient(second.mcpUrl, held.secret);
    await client.close();
    const heard: (string | undefined)[] = [];
    second.runtime.deps.authenticator.onInvalidate((from, tenantId) => {
      if (from === 'peer') {
        heard.push(tenantId);
      }
    });

    // A key of the tenant the second gateway holds nothing of is revoked on the first.
    const notHeldOwner = await sessionFor(first, notHeld.tenantId);
    const before = messages.length;
    expect((await call(first, 'POST', `/api/v1/keys/${spare.id}/revoke`, { as: notHeldOwner })).status).toBe(
      200,
    );
    // Other test files' gateways share this Redis: their messages are told apart by tenant.
    const about = (tenantId: string) =>
      messages.slice(before).filter((message) => message.includes(tenantId));
    await until(async () => about(notHeld.tenantId).length > 0, 5_000);
    const revoked = about(notHeld.tenantId);
    expect(revoked).toHaveLength(1);
    expect(Object.keys(JSON.parse(revoked[0] as string)).sort()).toEqual(['from', 'tenantId']);
    expect(JSON.parse(revoked[0] as string)).toMatchObject({ tenantId: notHeld.tenantId });
    // Nothing that could be used as, or matched against, a key.
    for (const secret of [spareSecret, held.secret, notHeld.secret]) {
      const hash = hashApiKey(secret);
      for (const material of [
        secret,
        secret.slice(0, 12),
        Buffer.from(hash).toString('hex'),
        Buffer.from(hash).toString('base64'),
        Buffer.from(hash).toString('base64url'),
      ]) {
        for (const message of messages) {
          expect(message).not.toContain(material);
        }
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(heard).not.toContain(notHeld.tenantId);

    // A key of the tenant it holds is revoked: it drops that key at once.
    const heldOwner = await sessionFor(first, held.tenantId);
    expect((await call(first, 'POST', `/api/v1/keys/${held.keyId}/revoke`, { as: heldOwner })).status).toBe(
      200,
    );
    await until(async () => heard.includes(held.tenantId), 5_000);
    const refused = await fetch(second.mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${held.secret}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(refused.status).toBe(401);
  }, 40_000);
});
