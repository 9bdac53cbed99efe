import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMULATED_VERSION, type LettaEmulator } from '../src/index.ts';
import { ANN_AGENT, FOREIGN_AGENT, KEY, startSeeded } from './helpers.ts';

let emulator: LettaEmulator;

beforeAll(async () => {
  emulator = await startSeeded();
});
afterAll(async () => {
  await emulator.close();
});

async function call(
  method: string,
  path: string,
  options: { key?: string | null; body?: string } = {},
): Promise<{ status: number; body: unknown }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.key !== null) {
    headers.authorization = `Bearer ${options.key ?? KEY}`;
  }
  const response = await fetch(`${emulator.url}${path}`, {
    method,
    headers,
    ...(options.body === undefined ? {} : { body: options.body }),
  });
  return { status: response.status, body: await response.json() };
}

const messagesPath = `/v1/agents/${ANN_AGENT}/messages`;
const valid = JSON.stringify({ messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] });

describe('authentication', () => {
  it('answers 401 without a bearer key or with a wrong one, and delivers nothing', async () => {
    for (const key of [null, 'sk-let-wrong']) {
      expect(await call('GET', '/v1/agents/', { key })).toEqual({
        status: 401,
        body: { detail: 'Unauthorized' },
      });
      expect(await call('POST', messagesPath, { key, body: valid })).toEqual({
        status: 401,
        body: { detail: 'Unauthorized' },
      });
    }
    const basic = await fetch(`${emulator.url}/v1/agents/`, { headers: { authorization: `Basic ${KEY}` } });
    expect(basic.status).toBe(401);
    expect(emulator.admin.messages()).toEqual([]);
  });

  it('serves health without a key', async () => {
    expect(await call('GET', '/v1/health/', { key: null })).toEqual({
      status: 200,
      body: { version: EMULATED_VERSION, status: 'ok' },
    });
  });
});

describe('not found', () => {
  it('answers 404 for an unknown agent, another organization’s agent and an unknown route', async () => {
    const unknown = 'agent-00000000-0000-4000-8000-000000000000';
    expect(await call('GET', `/v1/agents/${unknown}`)).toEqual({
      status: 404,
      body: { detail: `Agent not found with id=${unknown}` },
    });
    expect(await call('POST', `/v1/agents/${FOREIGN_AGENT}/messages`, { body: valid })).toEqual({
      status: 404,
      body: { detail: `Agent not found with id=${FOREIGN_AGENT}` },
    });
    expect(await call('GET', '/v1/nothing-here')).toEqual({ status: 404, body: { detail: 'Not Found' } });
    expect((await call('DELETE', messagesPath)).status).toBe(405);
  });
});

describe('validation', () => {
  const cases: [string, string | undefined, unknown][] = [
    ['invalid JSON', '{"messages": [', [{ type: 'json_invalid', loc: ['body', 0] }]],
    ['no body', undefined, [{ type: 'missing', loc: ['body'] }]],
    ['an array body', '[]', [{ type: 'model_attributes_type', loc: ['body'] }]],
    ['no messages', '{}', [{ type: 'missing', loc: ['body', 'messages'] }]],
    ['messages not a list', '{"messages": "hi"}', [{ type: 'list_type', loc: ['body', 'messages'] }]],
    [
      'a message without content',
      '{"messages": [{"role": "user"}]}',
      [{ type: 'missing', loc: ['body', 'messages', 0, 'content'], msg: 'Field required' }],
    ],
    [
      'an unknown role',
      '{"messages": [{"role": "robot", "content": "hi"}]}',
      [{ type: 'literal_error', loc: ['body', 'messages', 0, 'role'] }],
    ],
    [
      'a text part without text',
      '{"messages": [{"role": "user", "content": [{"type": "text"}]}]}',
      [{ type: 'missing', loc: ['body', 'messages', 0, 'content', 0, 'text'] }],
    ],
    [
      'an unknown content type',
      '{"messages": [{"role": "user", "content": [{"type": "video", "url": "x"}]}]}',
      [{ type: 'union_tag_invalid', loc: ['body', 'messages', 0, 'content', 0] }],
    ],
  ];
  for (const [name, body, detail] of cases) {
    it(`answers 422 to ${name} and records no message`, async () => {
      const response = await call('POST', messagesPath, body === undefined ? {} : { body });
      expect(response.status).toBe(422);
      expect(response.body).toMatchObject({ detail });
      expect(emulator.admin.messages()).toEqual([]);
    });
  }

  it('validates before looking the agent up, as FastAPI does', async () => {
    const response = await call('POST', '/v1/agents/agent-00000000-0000-4000-8000-000000000000/messages', {
      body: '{}',
    });
    expect(response.status).toBe(422);
  });

  it('answers 422 to a bad list query and 400 to an unknown cursor', async () => {
    expect(await call('GET', '/v1/agents/?limit=abc')).toMatchObject({
      status: 422,
      body: { detail: [{ type: 'int_parsing', loc: ['query', 'limit'] }] },
    });
    expect(await call('GET', '/v1/agents/?order=sideways')).toMatchObject({
      status: 422,
      body: { detail: [{ type: 'literal_error', loc: ['query', 'order'] }] },
    });
    expect(await call('GET', `/v1/agents/?after=${FOREIGN_AGENT}`)).toEqual({
      status: 400,
      body: { detail: `No Agent found with id ${FOREIGN_AGENT}` },
    });
  });

  it('accepts the plain string form of content and the input shorthand', async () => {
    const plain = await call('POST', messagesPath, {
      body: JSON.stringify({ messages: [{ role: 'user', content: 'plain' }] }),
    });
    expect(plain.status).toBe(200);
    const shorthand = await call('POST', messagesPath, { body: JSON.stringify({ input: 'shorthand' }) });
    expect(shorthand.status).toBe(200);
    expect(emulator.admin.messages(ANN_AGENT).map((m) => m.text)).toEqual(['plain', 'shorthand']);
  });
});
