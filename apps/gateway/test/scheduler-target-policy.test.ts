/**
 * Delivery targets against each process's own URL policy (OUTBOUND_ALLOW_PRIVATE, alias
 * TARGETS_ALLOW_PRIVATE): a gateway refuses to schedule a prompt to a target it would refuse at
 * delivery, the dashboard's REST API and the CLI refuse to create or enable one, each with the
 * setting named; and an occurrence a worker refuses by policy waits, blocked and visible, until a
 * worker started with the setting on delivers it.
 */

import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { occurrenceId } from '@calgate/store';
import { type Receiver, startReceiver, until } from '@calgate/testkit';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli.ts';
import { type Browser, call, sessionFor } from './api-client.ts';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway, textOf } from './harness.ts';
import { callOk } from './tool-calls.ts';
import { startWorker as spawnWorker } from './workers.ts';

const SETTING =
  'Calgate refuses private targets unless TARGETS_ALLOW_PRIVATE=true (or OUTBOUND_ALLOW_PRIVATE=true)';
const LOOPBACK = `target URL address 127.0.0.1 is a loopback address; ${SETTING}`;
const literally = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('delivery targets and the URL policy of each process', () => {
  const encryption = randomBytes(32).toString('base64');
  /** No setting: private targets refused, as in production. */
  let strict: TestGateway;
  /** The same database with OUTBOUND_ALLOW_PRIVATE=true. */
  let lan: TestGateway;
  let receiver: Receiver;
  let secret = '';
  let tenantId = '';
  let keySecret = '';
  let onStrict: Client;
  let onLan: Client;
  let annStrict: Browser;
  let annLan: Browser;
  let localTarget = '';
  const workers = new Set<ChildProcess>();

  beforeAll(async () => {
    strict = await startTestGateway({ ...HIGH_RATE_LIMITS, ENCRYPTION_KEY: encryption });
    lan = await startTestGateway(
      { ...HIGH_RATE_LIMITS, ENCRYPTION_KEY: encryption, OUTBOUND_ALLOW_PRIVATE: 'true' },
      { db: strict.db },
    );
    const owner = await strict.seedTenant('Policy');
    tenantId = owner.tenantId;
    keySecret = owner.secret;
    await strict.runtime.keys.setDefaults(tenantId, owner.keyId, { toolsets: ['calendar', 'scheduler'] });
    receiver = await startReceiver(() => secret);
    annStrict = await sessionFor(strict, tenantId);
    annLan = await sessionFor(lan, tenantId);
    onStrict = await connectClient(strict.mcpUrl, keySecret);
    onLan = await connectClient(lan.mcpUrl, keySecret);
  });

  afterEach(async () => {
    await Promise.all([...workers].map((child) => stopWorker(child)));
  });

  afterAll(async () => {
    await onStrict?.close();
    await onLan?.close();
    await receiver?.close();
    await lan?.stop();
    await strict?.stop();
  });

  function startWorker(env: Record<string, string>): Promise<ChildProcess> {
    return spawnWorker({ DATABASE_URL: strict.db.url, ENCRYPTION_KEY: encryption, ...env }, workers);
  }

  function stopWorker(child: ChildProcess): Promise<void> {
    return new Promise((resolve) => {
      if (child.exitCode !== null) {
        resolve();
        return;
      }
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }

  async function cli(env: Record<string, string>, ...args: string[]) {
    let out = '';
    let err = '';
    const code = await main(
      args,
      { DATABASE_URL: strict.db.url, ENCRYPTION_KEY: encryption, ...env },
      { out: (t) => (out += `${t}\n`), err: (t) => (err += `${t}\n`) },
    );
    return { code, out, err };
  }

  async function refusedCall(client: Client, name: string, args: Record<string, unknown>) {
    const result = await client.callTool({ name, arguments: args });
    expect(result.isError, `${name} should be refused: ${textOf(result)}`).toBe(true);
    return textOf(result);
  }

  const tool = callOk;

  async function schedules(client: Client) {
    return ((await tool(client, 'list_scheduled_prompts', {})) as { schedules: Record<string, unknown>[] })
      .schedules;
  }

  it('a gateway with OUTBOUND_ALLOW_PRIVATE=true accepts a loopback target; one without refuses it, naming the setting', async () => {
    const refused = await call(strict, 'POST', '/api/v1/targets', {
      as: annStrict,
      body: { kind: 'webhook', name: 'Local receiver', url: receiver.url },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toBe(`Cannot add this target: ${LOOPBACK}.`);
    const http = await call(strict, 'POST', '/api/v1/targets', {
      as: annStrict,
      body: { kind: 'webhook', name: 'Plain http', url: 'http://93.184.215.14/hook' },
    });
    expect(http.status).toBe(400);
    expect(http.body.error.message).toMatch(
      /^Cannot add this target: target URL must use https; Calgate accepts plain http only when TARGETS_ALLOW_PRIVATE=true \(or OUTBOUND_ALLOW_PRIVATE=true\)\.$/,
    );

    const created = await call(lan, 'POST', '/api/v1/targets', {
      as: annLan,
      body: { kind: 'webhook', name: 'Local receiver', url: receiver.url },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    localTarget = created.body.target.id;
    secret = created.body.secret;
    expect((await call(lan, 'GET', '/api/v1/targets', { as: annLan })).body.allowPrivateTargets).toBe(true);
    expect((await call(strict, 'GET', '/api/v1/targets', { as: annStrict })).body.allowPrivateTargets).toBe(
      false,
    );
  });

  it('scheduling to a target this gateway would refuse at delivery is refused with the setting named; nothing is stored', async () => {
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const refusal = new RegExp(
      `^Delivery target ${localTarget} \\("Local receiver"\\) is refused by this Calgate's URL policy, so no prompt could reach it: ${literally(LOOPBACK)}\\.$`,
    );
    expect(
      await refusedCall(onStrict, 'schedule_prompt_at', { prompt: 'ping', at, targetId: localTarget }),
    ).toMatch(refusal);
    expect(
      await refusedCall(onStrict, 'schedule_prompt_cron', {
        prompt: 'ping',
        cron: '0 9 * * *',
        timeZone: 'UTC',
        targetId: localTarget,
      }),
    ).toMatch(refusal);
    // The only target of the tenant, chosen without targetId, is checked the same way.
    const implicit = await refusedCall(onStrict, 'schedule_prompt_every', { prompt: 'ping', every: '1h' });
    expect(implicit).toMatch(refusal);
    expect(implicit).toContain('TARGETS_ALLOW_PRIVATE=true');
    expect(await schedules(onStrict)).toEqual([]);

    const made = await tool(onLan, 'schedule_prompt_at', { prompt: 'ping', at, targetId: localTarget });
    expect(made).toMatchObject({ kind: 'once', status: 'active' });
    await tool(onLan, 'cancel_scheduled_prompt', { scheduleId: made.scheduleId });
  });

  it('enabling a target is checked against the policy of the process that enables it', async () => {
    const disabled = await call(lan, 'POST', `/api/v1/targets/${localTarget}/disable`, {
      as: annLan,
      body: { reason: 'maintenance' },
    });
    expect(disabled.status).toBe(200);
    const refused = await call(strict, 'POST', `/api/v1/targets/${localTarget}/enable`, { as: annStrict });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toBe(`Cannot enable this target: ${LOOPBACK}.`);
    const listed = await call(strict, 'GET', '/api/v1/targets', { as: annStrict });
    expect(listed.body.targets.find((t: { id: string }) => t.id === localTarget).disabled).toBe(true);
    const enabled = await call(lan, 'POST', `/api/v1/targets/${localTarget}/enable`, { as: annLan });
    expect(enabled.status).toBe(200);
    expect(enabled.body.target.disabled).toBe(false);
  });

  it('calgate target create checks with its own settings: OUTBOUND_ALLOW_PRIVATE, or TARGETS_ALLOW_PRIVATE as its alias', async () => {
    const args = ['target', 'create', '--kind', 'webhook', '--url', receiver.url, '--json'];
    const none = await cli({}, ...args, '--name', 'cli-none');
    expect(none.code).toBe(1);
    expect(none.err).toContain(`Cannot add this target: ${LOOPBACK}.`);
    const off = await cli({ OUTBOUND_ALLOW_PRIVATE: 'false' }, ...args, '--name', 'cli-off');
    expect(off.code).toBe(1);
    expect(off.err).toContain(LOOPBACK);

    const primary = await cli({ OUTBOUND_ALLOW_PRIVATE: 'true' }, ...args, '--name', 'cli-primary');
    expect(primary.err).toBe('');
    expect(primary.code).toBe(0);
    const alias = await cli({ TARGETS_ALLOW_PRIVATE: 'true' }, ...args, '--name', 'cli-alias');
    expect(alias.err).toBe('');
    expect(alias.code).toBe(0);

    const conflict = await cli(
      { OUTBOUND_ALLOW_PRIVATE: 'true', TARGETS_ALLOW_PRIVATE: 'false' },
      ...args,
      '--name',
      'cli-conflict',
    );
    expect(conflict.code).not.toBe(0);
    expect(conflict.err).toContain(
      'OUTBOUND_ALLOW_PRIVATE=true and TARGETS_ALLOW_PRIVATE=false disagree; TARGETS_ALLOW_PRIVATE is the old name of OUTBOUND_ALLOW_PRIVATE: set only OUTBOUND_ALLOW_PRIVATE.',
    );
    const names = (await call(strict, 'GET', '/api/v1/targets', { as: annStrict })).body.targets.map(
      (t: { name: string }) => t.name,
    );
    expect(names.filter((name: string) => name.startsWith('cli-')).sort()).toEqual([
      'cli-alias',
      'cli-primary',
    ]);
    for (const target of (await call(strict, 'GET', '/api/v1/targets', { as: annStrict })).body.targets) {
      if (target.name.startsWith('cli-')) {
        await call(strict, 'DELETE', `/api/v1/targets/${target.id}`, { as: annStrict });
      }
    }
  });

  it('an occurrence a worker refuses by policy is blocked, visibly, and a worker started with the setting on delivers it', async () => {
    const at = new Date(Date.now() + 1_500);
    const made = await tool(onLan, 'schedule_prompt_at', {
      prompt: 'Blocked, then delivered',
      at: at.toISOString(),
      targetId: localTarget,
    });
    const scheduleId = String(made.scheduleId);
    const occurrence = occurrenceId(scheduleId, new Date(Date.parse(String(made.nextRun))));

    const strictWorker = await startWorker({ OUTBOUND_ALLOW_PRIVATE: 'false' });
    const deliveries = () => lan.runtime.scheduler.deliveries.listBySchedule(tenantId, scheduleId);
    await until(async () => (await deliveries())[0]?.status === 'blocked', 30_000);
    const [blocked] = await deliveries();
    expect(blocked?.error).toBe(`webhook target ${localTarget} refused: ${LOOPBACK}`);
    expect(receiver.received.filter((r) => r.body.scheduleId === scheduleId)).toEqual([]);

    // The agent and the person both see why it waits.
    const [mine] = (await schedules(onLan)).filter((one) => one.scheduleId === scheduleId);
    expect(mine?.lastDelivery).toMatchObject({ status: 'blocked', error: blocked?.error });
    const log = await call(lan, 'GET', '/api/v1/deliveries?status=blocked', { as: annLan });
    expect(log.status).toBe(200);
    expect(log.body.deliveries).toEqual([
      expect.objectContaining({ occurrenceId: occurrence, status: 'blocked', error: blocked?.error }),
    ]);

    // Still blocked a while later: not retried in a loop against the same policy, not failed for good.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect((await deliveries())[0]?.status).toBe('blocked');
    await stopWorker(strictWorker);

    await startWorker({ TARGETS_ALLOW_PRIVATE: 'true' });
    const got = await until(() => receiver.received.find((r) => r.body.scheduleId === scheduleId), 30_000);
    expect(got).toMatchObject({
      id: occurrence,
      verified: true,
      body: { prompt: 'Blocked, then delivered' },
    });
    await until(async () => (await deliveries())[0]?.status === 'delivered', 10_000);
    expect(receiver.received.filter((r) => r.body.scheduleId === scheduleId)).toHaveLength(1);
  }, 120_000);
});
