import { randomUUID } from 'node:crypto';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';

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

/**
 * Carries a client's answer to an elicitation back to the call that asked. MCP is served without
 * sessions: a call that asks the person keeps its POST's event stream open, and the client
 * answers with a POST of its own, which a fresh server would not recognise. Elicitation requests
 * therefore leave with ids unique to this process, and their answers are handed to the waiting
 * server with its own id, only for the same key.
 */
export class ElicitationRelay {
  readonly #waiting = new Map<string, Waiting>();

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
   * answers and every one of them was for this key's waiting calls (then it needs no server).
   */
  deliver(keyId: string, body: unknown): boolean {
    const messages = Array.isArray(body) ? body : [body];
    if (messages.length === 0 || !messages.every(isResponse)) {
      return false;
    }
    const found = messages.map((message) => {
      const waiting = this.#waiting.get(String(message.id));
      return waiting?.keyId === keyId ? waiting : undefined;
    });
    if (found.some((waiting) => waiting === undefined)) {
      return false;
    }
    messages.forEach((message, index) => {
      const waiting = found[index] as Waiting;
      this.#waiting.delete(String(message.id));
      waiting.transport.onmessage?.({ ...message, id: waiting.id, jsonrpc: '2.0' } as JSONRPCMessage);
    });
    return true;
  }
}
