import { AuthenticationError, NotFoundError, UnprocessableEntityError } from '@letta-ai/letta-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LettaEmulator } from '../src/index.ts';
import {
  ANN_AGENT,
  BOB_AGENT,
  baseSeed,
  clientFor,
  FOREIGN_AGENT,
  failure,
  KEY,
  OTHER_ORG_KEY,
  startSeeded,
  userText,
} from './helpers.ts';

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

describe('agents through the official client', () => {
  it('lists the key organization’s agents, newest first, as AgentState', async () => {
    const page = await clientFor(emulator).agents.list();
    expect(page.items.map((a) => a.id)).toEqual([BOB_AGENT, ANN_AGENT]);
    const ann = page.items[1];
    expect(ann).toMatchObject({
      id: ANN_AGENT,
      name: 'ann-assistant',
      agent_type: 'letta_v1_agent',
      tags: ['calendar'],
      created_at: '2026-01-05T09:00:00.000Z',
      blocks: [],
      tools: [],
      llm_config: { model: 'gpt-4o-mini', model_endpoint_type: 'openai' },
    });
    const foreign = await clientFor(emulator, { apiKey: OTHER_ORG_KEY }).agents.list();
    expect(foreign.items.map((a) => a.id)).toEqual([FOREIGN_AGENT]);
  });

  it('pages with limit and the after cursor the client sends', async () => {
    const more = emulator.admin.seed({
      agents: Array.from({ length: 5 }, (_, i) => ({
        name: `bulk-${i}`,
        created_at: `2026-02-0${i + 1}T00:00:00Z`,
      })),
    });
    expect(more.every((a) => /^agent-[0-9a-f-]{36}$/.test(a.id))).toBe(true);
    const client = clientFor(emulator);
    const first = await client.agents.list({ limit: 3, order: 'asc' });
    expect(first.items.map((a) => a.name)).toEqual(['ann-assistant', 'bob-assistant', 'bulk-0']);
    const names: string[] = [];
    for await (const agent of client.agents.list({ limit: 3, order: 'asc' })) {
      names.push(agent.name);
    }
    expect(names).toEqual([
      'ann-assistant',
      'bob-assistant',
      'bulk-0',
      'bulk-1',
      'bulk-2',
      'bulk-3',
      'bulk-4',
    ]);
    const lists = emulator.admin.requests({ op: 'agents.list' }).slice(1);
    expect(lists.map((r) => r.query)).toEqual([
      { limit: '3', order: 'asc' },
      { limit: '3', order: 'asc', after: more[0]?.id },
      { limit: '3', order: 'asc', after: more[3]?.id },
      { limit: '3', order: 'asc', after: more[4]?.id },
    ]);
    const byName = await client.agents.list({ name: 'bulk-2' });
    expect(byName.items.map((a) => a.name)).toEqual(['bulk-2']);
    const tagged = await client.agents.list({ tags: ['calendar', 'nothing'] });
    expect(tagged.items.map((a) => a.id)).toEqual([ANN_AGENT]);
  });

  it('retrieves an agent, and answers 404 for an unknown one or another organization’s', async () => {
    const client = clientFor(emulator);
    const bob = await client.agents.retrieve(BOB_AGENT);
    expect(bob).toMatchObject({ id: BOB_AGENT, name: 'bob-assistant', message_ids: [] });
    const missing = await failure(client.agents.retrieve('agent-00000000-0000-4000-8000-00000000dead'));
    expect(missing).toBeInstanceOf(NotFoundError);
    expect((missing as NotFoundError).error).toEqual({
      detail: 'Agent not found with id=agent-00000000-0000-4000-8000-00000000dead',
    });
    expect(await failure(client.agents.retrieve(FOREIGN_AGENT))).toBeInstanceOf(NotFoundError);
  });

  it('refuses a wrong API key with AuthenticationError', async () => {
    const error = await failure(clientFor(emulator, { apiKey: 'sk-let-wrong' }).agents.list());
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as AuthenticationError).status).toBe(401);
    expect(emulator.admin.requests().at(-1)).toMatchObject({ status: 401, apiKey: 'sk-let-wrong' });
  });
});

describe('messages through the official client', () => {
  it('delivers a user message: the agent records the text and answers a LettaResponse', async () => {
    const response = await clientFor(emulator).agents.messages.create(
      ANN_AGENT,
      userText('Review today’s calendar'),
    );
    const [reasoning, assistant] = response.messages;
    expect(reasoning).toMatchObject({ message_type: 'reasoning_message' });
    expect(assistant).toMatchObject({
      message_type: 'assistant_message',
      content: 'Received: Review today’s calendar',
    });
    for (const m of response.messages) {
      expect(m.id).toMatch(/^message-[0-9a-f-]{36}$/);
      expect(Date.parse(m.date)).not.toBeNaN();
    }
    expect(response.stop_reason).toEqual({ message_type: 'stop_reason', stop_reason: 'end_turn' });
    expect(response.usage).toMatchObject({ message_type: 'usage_statistics', step_count: 1 });
    expect(response.usage.total_tokens).toBe(
      (response.usage.prompt_tokens ?? 0) + (response.usage.completion_tokens ?? 0),
    );
    expect(response.usage.run_ids).toEqual([(assistant as { run_id: string }).run_id]);

    const received = emulator.admin.messages(ANN_AGENT);
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({
      agentId: ANN_AGENT,
      role: 'user',
      text: 'Review today’s calendar',
      content: [{ type: 'text', text: 'Review today’s calendar' }],
      runId: response.usage.run_ids?.[0],
    });
    expect(emulator.admin.messages(BOB_AGENT)).toEqual([]);
    const [request] = emulator.admin.requests({ op: 'messages.create' });
    expect(request).toMatchObject({
      method: 'POST',
      path: `/v1/agents/${ANN_AGENT}/messages`,
      agentId: ANN_AGENT,
      apiKey: KEY,
      status: 200,
      body: userText('Review today’s calendar'),
    });
    const ann = await clientFor(emulator).agents.retrieve(ANN_AGENT);
    expect(ann.message_ids).toHaveLength(3);
    expect(ann.last_stop_reason).toBe('end_turn');
  });

  it('answers with the seeded reply and filters return message types', async () => {
    const response = await clientFor(emulator).agents.messages.create(BOB_AGENT, {
      ...userText('ping'),
      include_return_message_types: ['assistant_message'],
    });
    expect(response.messages).toHaveLength(1);
    expect(response.messages[0]).toMatchObject({ message_type: 'assistant_message', content: 'On it.' });
  });

  it('surfaces a malformed body as UnprocessableEntityError and records nothing', async () => {
    const error = await failure(
      clientFor(emulator).agents.messages.create(ANN_AGENT, {
        messages: [{ role: 'robot' as 'user', content: 'hi' }],
      }),
    );
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect((error as UnprocessableEntityError).error).toMatchObject({
      detail: [{ type: 'literal_error', loc: ['body', 'messages', 0, 'role'] }],
    });
    expect(emulator.admin.messages()).toEqual([]);
  });

  it('keeps the start seed across reset', () => {
    expect(emulator.admin.agents().map((a) => a.id)).toEqual(baseSeed().agents?.map((a) => a.id));
  });
});
