import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { declaresFormElicitation, MemoryClientCapabilityStore } from '../src/client-capabilities.ts';
import { ElicitationRelay } from '../src/http/elicitation-relay.ts';

/** A transport that keeps what the server sent and what it was handed. */
function recordingTransport() {
  const sent: JSONRPCMessage[] = [];
  const received: JSONRPCMessage[] = [];
  const transport: Transport = {
    start: async () => {},
    close: async () => {},
    send: async (message) => {
      sent.push(message);
    },
    onmessage: (message) => {
      received.push(message);
    },
  };
  return { transport, sent, received };
}

const ask = { jsonrpc: '2.0', id: 0, method: 'elicitation/create', params: { message: 'Allow?' } } as const;

describe('ElicitationRelay', () => {
  it('sends forms with ids of its own and hands the answer back with the server’s id, for the same key only', async () => {
    const relay = new ElicitationRelay();
    const { transport, sent, received } = recordingTransport();
    const forget = relay.watch(transport, 'key_a');
    await transport.send(ask);
    await transport.send({ jsonrpc: '2.0', id: 'x', result: {} });
    const relayed = (sent[0] as { id: string }).id;
    expect(relayed).toMatch(/^elicit_[0-9a-f-]{36}$/);
    expect(sent[1]).toEqual({ jsonrpc: '2.0', id: 'x', result: {} });
    const answer = { jsonrpc: '2.0', id: relayed, result: { action: 'accept', content: { allow: true } } };
    // Another key's POST cannot answer it, and is published nowhere (no channel).
    expect(relay.deliver('key_b', answer)).toBe(true);
    expect(received).toEqual([]);
    expect(relay.deliver('key_a', answer)).toBe(true);
    expect(received).toEqual([{ ...answer, id: 0 }]);
    // Once only.
    expect(relay.deliver('key_a', answer)).toBe(true);
    expect(received).toHaveLength(1);
    forget();
  });

  it('leaves requests and foreign answers to the server, and publishes answers it does not hold', () => {
    const published: string[] = [];
    const relay = new ElicitationRelay({ publish: (payload) => published.push(payload) });
    expect(relay.deliver('key_a', { jsonrpc: '2.0', id: 1, method: 'tools/list' })).toBe(false);
    expect(relay.deliver('key_a', { jsonrpc: '2.0', id: 1, result: {} })).toBe(false);
    expect(relay.deliver('key_a', [])).toBe(false);
    const elsewhere = { jsonrpc: '2.0', id: 'elicit_00000000-0000-4000-8000-000000000000', result: {} };
    expect(relay.deliver('key_a', elsewhere)).toBe(true);
    expect(published.map((payload) => JSON.parse(payload))).toEqual([
      { keyId: 'key_a', messages: [elsewhere] },
    ]);
  });

  it('delivers what another process received for a call waiting here', async () => {
    const relay = new ElicitationRelay();
    const { transport, sent, received } = recordingTransport();
    relay.watch(transport, 'key_a');
    await transport.send(ask);
    const id = (sent[0] as { id: string }).id;
    relay.receive('not json');
    relay.receive(JSON.stringify({ keyId: 'key_b', messages: [{ jsonrpc: '2.0', id, result: {} }] }));
    expect(received).toEqual([]);
    relay.receive(
      JSON.stringify({ keyId: 'key_a', messages: [{ jsonrpc: '2.0', id, result: { action: 'decline' } }] }),
    );
    expect(received).toEqual([{ jsonrpc: '2.0', id: 0, result: { action: 'decline' } }]);
  });
});

describe('declaresFormElicitation and the capability store', () => {
  it('reads form support from initialize params (an empty object means form)', () => {
    expect(declaresFormElicitation({ capabilities: { elicitation: {} } })).toBe(true);
    expect(declaresFormElicitation({ capabilities: { elicitation: { form: {} } } })).toBe(true);
    expect(declaresFormElicitation({ capabilities: { elicitation: { form: {}, url: {} } } })).toBe(true);
    expect(declaresFormElicitation({ capabilities: { elicitation: { url: {} } } })).toBe(false);
    expect(declaresFormElicitation({ capabilities: {} })).toBe(false);
    expect(declaresFormElicitation(undefined)).toBe(false);
  });

  it('remembers the last client of each key for a day', async () => {
    let now = 0;
    const store = new MemoryClientCapabilityStore(() => now);
    expect(await store.elicits('key_a')).toBe(false);
    await store.setElicits('key_a', true);
    expect(await store.elicits('key_a')).toBe(true);
    await store.setElicits('key_a', false);
    expect(await store.elicits('key_a')).toBe(false);
    await store.setElicits('key_a', true);
    now = 24 * 60 * 60 * 1000;
    expect(await store.elicits('key_a')).toBe(false);
  });
});
