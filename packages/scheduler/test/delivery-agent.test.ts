import { describe, expect, it } from 'vitest';
import { agentIdFromMeta, resolveAgentId } from '../src/index.ts';

describe('agentIdFromMeta', () => {
  it('reads the keys in order: agentId, agent_id, letta_agent_id, caller_agent_id, agent.id', () => {
    const all = {
      agent: { id: 'from-agent-object' },
      caller_agent_id: 'from-caller',
      letta_agent_id: 'from-letta',
      agent_id: 'from-snake',
      agentId: 'from-camel',
    };
    expect(agentIdFromMeta(all)).toBe('from-camel');
    const { agentId: _a, ...noCamel } = all;
    expect(agentIdFromMeta(noCamel)).toBe('from-snake');
    const { agent_id: _b, ...noSnake } = noCamel;
    expect(agentIdFromMeta(noSnake)).toBe('from-letta');
    const { letta_agent_id: _c, ...noLetta } = noSnake;
    expect(agentIdFromMeta(noLetta)).toBe('from-caller');
    const { caller_agent_id: _d, ...onlyObject } = noLetta;
    expect(agentIdFromMeta(onlyObject)).toBe('from-agent-object');
  });

  it('skips values that are not usable ids and falls through to the next key', () => {
    expect(agentIdFromMeta({ agentId: 42, agent_id: 'agent-7' })).toBe('agent-7');
    expect(agentIdFromMeta({ agentId: '', agent_id: '   ', letta_agent_id: 'agent-8' })).toBe('agent-8');
    expect(agentIdFromMeta({ agentId: 'x'.repeat(201), caller_agent_id: 'agent-9' })).toBe('agent-9');
    expect(agentIdFromMeta({ agentId: 'agent\n1', agent: { id: 'agent-10' } })).toBe('agent-10');
    expect(agentIdFromMeta({ agentId: 'agent\u00001' })).toBeUndefined();
    expect(agentIdFromMeta({ agentId: 'x'.repeat(200) })).toBe('x'.repeat(200));
    expect(agentIdFromMeta({ agentId: '  agent-11  ' })).toBe('agent-11');
  });

  it('ignores anything that is not an object, and agent.id of a non-object', () => {
    for (const meta of [undefined, null, 'agent-1', 7, ['agent-1'], { agent: 'agent-1' }, { agent: ['x'] }]) {
      expect(agentIdFromMeta(meta)).toBeUndefined();
    }
    expect(agentIdFromMeta({ agent: { id: 5 } })).toBeUndefined();
    expect(agentIdFromMeta({ agent: { name: 'ann' } })).toBeUndefined();
  });

  it('does not read inherited properties', () => {
    const meta = Object.create({ agentId: 'inherited' }) as Record<string, unknown>;
    expect(agentIdFromMeta(meta)).toBeUndefined();
  });
});

describe('resolveAgentId', () => {
  const all = {
    explicit: 'agent-arg',
    meta: { agentId: 'agent-meta' },
    keyDefault: 'agent-key',
    targetDefault: 'agent-target',
  };

  it('prefers the argument, then _meta, then the key’s default, then the target’s', () => {
    expect(resolveAgentId(all)).toEqual({ agentId: 'agent-arg', source: 'argument' });
    expect(resolveAgentId({ ...all, explicit: undefined })).toEqual({
      agentId: 'agent-meta',
      source: 'meta',
    });
    expect(resolveAgentId({ ...all, explicit: null, meta: {} })).toEqual({
      agentId: 'agent-key',
      source: 'key',
    });
    expect(resolveAgentId({ targetDefault: 'agent-target', keyDefault: null })).toEqual({
      agentId: 'agent-target',
      source: 'target',
    });
  });

  it('skips unusable candidates and gives undefined when none is left', () => {
    expect(resolveAgentId({ explicit: '', meta: { agent_id: '\t' }, keyDefault: 'agent-key' })).toEqual({
      agentId: 'agent-key',
      source: 'key',
    });
    expect(resolveAgentId({})).toBeUndefined();
    expect(
      resolveAgentId({ explicit: ' ', meta: 'nope', keyDefault: null, targetDefault: null }),
    ).toBeUndefined();
  });
});
