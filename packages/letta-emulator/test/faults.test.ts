import {
  APIConnectionError,
  APIConnectionTimeoutError,
  InternalServerError,
  RateLimitError,
} from '@letta-ai/letta-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LettaEmulator } from '../src/index.ts';
import { ANN_AGENT, BOB_AGENT, clientFor, failure, startSeeded, userText } from './helpers.ts';

let emulator: LettaEmulator;

beforeAll(async () => {
  emulator = await startSeeded();
});
afterEach(() => {
  emulator.admin.reset();
});
afterAll(async () => {
  await emulator.close();
});

const send = (agentId: string, text: string, options: Parameters<typeof clientFor>[1] = {}) =>
  clientFor(emulator, options).agents.messages.create(agentId, userText(text));

describe('scripted errors', () => {
  it('answers 503 to the next two messages to one agent, then the client’s retry gets through', async () => {
    emulator.admin.fail({ op: 'messages.create', agentId: ANN_AGENT }, { kind: 'error', status: 503 }, 2);
    await send(BOB_AGENT, 'unaffected');
    const error = await failure(send(ANN_AGENT, 'first try'));
    expect(error).toBeInstanceOf(InternalServerError);
    expect((error as InternalServerError).status).toBe(503);
    expect((error as InternalServerError).error).toEqual({ detail: 'Service Unavailable' });
    expect(emulator.admin.messages(ANN_AGENT)).toEqual([]);

    const ok = await send(ANN_AGENT, 'with retries', { maxRetries: 2 });
    expect(ok.stop_reason.stop_reason).toBe('end_turn');
    const calls = emulator.admin.requests({ op: 'messages.create', agentId: ANN_AGENT });
    expect(calls.map((r) => [r.status, r.fault, r.retryCount])).toEqual([
      [503, 'error', 0],
      [503, 'error', 0],
      [200, undefined, 1],
    ]);
    expect(emulator.admin.messages(ANN_AGENT).map((m) => m.text)).toEqual(['with retries']);
    expect(emulator.admin.pendingFaults()).toEqual([]);
  });

  it('sends 429 with Retry-After, which the client honours before retrying', async () => {
    emulator.admin.fail({ op: 'messages.create' }, { kind: 'error', status: 429, retryAfterSeconds: 1 });
    const limited = await failure(send(ANN_AGENT, 'too soon'));
    expect(limited).toBeInstanceOf(RateLimitError);
    expect((limited as RateLimitError).headers?.get('retry-after')).toBe('1');

    emulator.admin.fail({ op: 'messages.create' }, { kind: 'error', status: 429, retryAfterSeconds: 1 });
    const started = performance.now();
    await send(ANN_AGENT, 'patient', { maxRetries: 1 });
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    expect(emulator.admin.messages().map((m) => m.text)).toEqual(['patient']);
  });

  it('answers 500 with a custom detail on agents.retrieve only', async () => {
    emulator.admin.script({
      match: { op: 'agents.*', method: 'GET' },
      action: { kind: 'error', status: 500, detail: 'database on fire' },
    });
    const error = await failure(clientFor(emulator).agents.retrieve(ANN_AGENT));
    expect(error).toBeInstanceOf(InternalServerError);
    expect((error as InternalServerError).error).toEqual({ detail: 'database on fire' });
    expect((await clientFor(emulator).agents.retrieve(ANN_AGENT)).id).toBe(ANN_AGENT);
  });

  it('refuses a fault it cannot apply', () => {
    expect(() => emulator.admin.fail({}, { kind: 'error', status: 200 })).toThrow(/400–599/);
    expect(() => emulator.admin.fail({}, { kind: 'error', status: 503 }, 0)).toThrow(/positive integer/);
  });
});

describe('delays, timeouts and dropped connections', () => {
  it('delays a request by the scripted latency', async () => {
    emulator.admin.fail({ op: 'messages.create' }, { kind: 'latency', ms: 300 });
    const started = performance.now();
    await send(ANN_AGENT, 'slow');
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('hangs until the client times out, without delivering', async () => {
    emulator.admin.fail({ agentId: BOB_AGENT }, { kind: 'hang' });
    const error = await failure(send(BOB_AGENT, 'into the void', { timeout: 300 }));
    expect(error).toBeInstanceOf(APIConnectionTimeoutError);
    expect(emulator.admin.requests().at(-1)).toMatchObject({ agentId: BOB_AGENT, fault: 'hang', status: 0 });
    expect(emulator.admin.messages()).toEqual([]);
  });

  it('drops the connection before processing: an error and no message', async () => {
    emulator.admin.fail({ op: 'messages.create' }, { kind: 'dropRequest' });
    const error = await failure(send(ANN_AGENT, 'lost'));
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(emulator.admin.messages()).toEqual([]);
    expect(emulator.admin.requests().at(-1)).toMatchObject({ fault: 'dropRequest', body: userText('lost') });
  });

  it('drops the response after processing: an error, yet the agent got the message', async () => {
    emulator.admin.fail({ op: 'messages.create' }, { kind: 'dropResponse' });
    const error = await failure(send(ANN_AGENT, 'delivered twice'));
    expect(error).toBeInstanceOf(APIConnectionError);
    await send(ANN_AGENT, 'delivered twice');
    expect(emulator.admin.messages(ANN_AGENT).map((m) => m.text)).toEqual([
      'delivered twice',
      'delivered twice',
    ]);
    expect(emulator.admin.requests({ op: 'messages.create' }).map((r) => [r.status, r.fault])).toEqual([
      [200, 'dropResponse'],
      [200, undefined],
    ]);
  });
});
