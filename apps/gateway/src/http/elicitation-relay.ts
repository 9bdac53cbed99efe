import { randomUUID } from 'node:crypto';
import type { JSONRPCMessage, RequestId, Transport } from '@modelcontextprotocol/server';

interface Waiting {
  keyId: string;
  id: RequestId;
  transport: Transport;
}

/** A JSON-RPC response (result or error) with an id, as a client answers a server's request. */
function isResponse(message: unknown): message is { id: RequestId; result?: unknown; error?: unknown } {
  if (typeof message !== 'object' || message === null || 'method' in message) {
    return false;
  }
  const { id } = message as { id?: unknown };
  return (typeof id === 'string' || typeof id === 'number') && ('result' in message || 'error' in message);
}

/** Passes answers to the other gateway processes (Redis pub/sub); absent, this process only. */
export interface RelayChannel {
  publish(payload: string): void;
}

const RELAYED_ID = /^elicit_[0-9a-f-]{36}$/;

/**
 * Carries a client's answer to an elicitation back to the call that asked. MCP is served without
 * sessions: a call that asks the person keeps its POST's event stream open, and the client
 * answers with a POST of its own, which a fresh server would not recognise — and which a load
 * balancer may send to another gateway process. Elicitation requests therefore leave with ids
 * unique to the installation; an answer is handed to the waiting server with its own id, only for
 * the same key, here or, through the channel, in the process that holds the call.
 */
export class ElicitationRelay {
  readonly #waiting = new Map<string, Waiting>();
  readonly #channel: RelayChannel | undefined;

  constructor(channel?: RelayChannel) {
    this.#channel = channel;
  }

  /** Makes `transport` send elicitation requests with relayable ids; the returned function forgets them. */
  watch(transport: Transport, keyId: string): () => void {
    const send = transport.send.bind(transport);
    const mine: string[] = [];
    transport.send = (message, options) => {
      if ('method' in message && message.method === 'elicitation/create' && 'id' in message) {
        const relayed = `elicit_${randomUUID()}`;
        this.#waiting.set(relayed, { keyId, id: message.id, transport });
        mine.push(relayed);
        return send({ ...message, id: relayed }, options);
      }
      return send(message, options);
    };
    return () => {
      for (const id of mine) {
        this.#waiting.delete(id);
      }
    };
  }

  /**
   * Hands a POSTed body's answers to the calls waiting for them. True when the body was only
   * answers to relayed requests (then it needs no server): those waiting here are delivered, the
   * others go to the other processes, each of which delivers what it holds for this key.
   */
  deliver(keyId: string, body: unknown): boolean {
    const messages = Array.isArray(body) ? body : [body];
    if (messages.length === 0 || !messages.every(isResponse)) {
      return false;
    }
    if (!messages.every((message) => RELAYED_ID.test(String(message.id)))) {
      return false;
    }
    const elsewhere = messages.filter((message) => !this.#deliverHere(keyId, message));
    if (elsewhere.length > 0) {
      this.#channel?.publish(JSON.stringify({ keyId, messages: elsewhere }));
    }
    return true;
  }

  /** Answers another process received (a payload of the channel); delivers those waiting here. */
  receive(payload: string): void {
    try {
      const { keyId, messages } = JSON.parse(payload) as { keyId: unknown; messages: unknown };
      if (typeof keyId === 'string' && Array.isArray(messages)) {
        for (const message of messages.filter(isResponse)) {
          this.#deliverHere(keyId, message);
        }
      }
    } catch {
      // Not ours: nothing to deliver.
    }
  }

  #deliverHere(keyId: string, message: { id: RequestId }): boolean {
    const waiting = this.#waiting.get(String(message.id));
    if (waiting === undefined || waiting.keyId !== keyId) {
      return false;
    }
    this.#waiting.delete(String(message.id));
    waiting.transport.onmessage?.({ ...message, id: waiting.id, jsonrpc: '2.0' } as JSONRPCMessage);
    return true;
  }
}
