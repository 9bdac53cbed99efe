/**
 * The common exchange on POST /api/mcp — one JSON-RPC request answered with plain JSON — without
 * the SDK's streamable HTTP transport. That transport builds a web Request, Headers and Response
 * per call, parses the body again, and serialises the whole answer, structuredContent included,
 * although the tool already wrote that content as JSON for its text. Here the answer is written
 * from the JSON the call made (see {@link jsonRpcBytes}) and sent as one buffer.
 *
 * Only requests the SDK transport would accept unchanged take this path (see {@link directRequest});
 * everything else — batches, initialize, event streams, bad headers or bodies — still goes through
 * the SDK, which keeps answering them (and their errors) exactly as before.
 */
import { JSONRPCMessageSchema } from '@modelcontextprotocol/core';
import {
  type JSONRPCMessage,
  type JSONRPCRequest,
  type RequestId,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Transport,
} from '@modelcontextprotocol/server';

/** structuredContent of a tool answer and the JSON the tool call already made of it. */
export interface EncodedAnswer {
  structured: Record<string, unknown>;
  json: string;
}

type Headers = Record<string, string | string[] | undefined>;

/**
 * The JSON-RPC request of a POST the SDK transport would serve as a plain JSON exchange, or
 * undefined: it checks Accept and Content-Type as the SDK does, takes one request (not a batch,
 * not initialize) that its message schema accepts, and a supported MCP-Protocol-Version if any.
 */
export function directRequest(headers: Headers, body: unknown): JSONRPCRequest | undefined {
  const accept = headers.accept;
  const contentType = headers['content-type'];
  const version = headers['mcp-protocol-version'];
  if (
    typeof accept !== 'string' ||
    !accept.includes('application/json') ||
    !accept.includes('text/event-stream') ||
    contentType !== 'application/json' ||
    (version !== undefined && (typeof version !== 'string' || !SUPPORTED_PROTOCOL_VERSIONS.includes(version)))
  ) {
    return undefined;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return undefined;
  }
  const { method, id } = body as { method?: unknown; id?: unknown };
  if (
    typeof method !== 'string' ||
    method === 'initialize' ||
    (typeof id !== 'string' && typeof id !== 'number')
  ) {
    return undefined;
  }
  // The SDK transport hands on what its schema parsed, not the raw body; so does this path.
  const parsed = JSONRPCMessageSchema.safeParse(body);
  return parsed.success ? (parsed.data as JSONRPCRequest) : undefined;
}

/** MCP 2025-11-25's code for an unknown resource; 2026-07-28 answers -32602 with the URI in data. */
const RESOURCE_NOT_FOUND = -32002;

/**
 * The message as MCP 2025-11-25 wants it: the SDK writes an unknown resource (-32002 with the URI
 * as its only data) as -32602 for every revision; clients of 2025-11-25 expect -32002.
 */
export function as2025(message: JSONRPCMessage): JSONRPCMessage {
  const error = (message as { error?: { code?: unknown; data?: unknown } }).error;
  if (error?.code !== -32602 || typeof error.data !== 'object' || error.data === null) {
    return message;
  }
  const keys = Object.keys(error.data);
  if (keys.length !== 1 || keys[0] !== 'uri') {
    return message;
  }
  return { ...message, error: { ...error, code: RESOURCE_NOT_FOUND } } as JSONRPCMessage;
}

/** Makes a 2025-11-25 transport send its messages as that revision wants them (see as2025). */
export function speak2025(transport: Transport): void {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => send(as2025(message), options);
}

/**
 * A transport for one request: delivers it to the server and resolves {@link answer} with the
 * server's response to it. Notifications are dropped, as the SDK transport drops them in JSON
 * mode (a request that wants progress or log messages gets an event stream, not this path).
 */
export class OneShotTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  /** The response, or undefined when the transport closed first (the client went away). */
  readonly answer: Promise<JSONRPCMessage | undefined>;
  readonly #id: RequestId;
  #settle: (message: JSONRPCMessage | undefined) => void = () => {};

  constructor(id: RequestId) {
    this.#id = id;
    this.answer = new Promise((resolve) => {
      this.#settle = resolve;
    });
  }

  async start(): Promise<void> {}

  /** Hands the request to the server the transport is connected to. */
  deliver(request: JSONRPCRequest): void {
    this.onmessage?.(request);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if ('id' in message && message.id === this.#id && ('result' in message || 'error' in message)) {
      this.#settle(as2025(message));
    }
  }

  async close(): Promise<void> {
    this.#settle(undefined);
    this.onclose?.();
  }
}

/** Whether two objects have the same keys in the same order with the very same values. */
function sameShallow(a: unknown, b: Record<string, unknown>): boolean {
  if (typeof a !== 'object' || a === null) {
    return false;
  }
  const record = a as Record<string, unknown>;
  const keys = Object.keys(record);
  const expected = Object.keys(b);
  if (keys.length !== expected.length) {
    return false;
  }
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    if (key !== expected[i] || record[key] !== b[key]) {
      return false;
    }
  }
  return true;
}

/** JSON of a plain object as pieces, with `written(key)` standing in for some values' JSON. */
function writeObject(
  value: Record<string, unknown>,
  written: (key: string) => string | string[] | undefined,
): string[] {
  const pieces = ['{'];
  for (const key of Object.keys(value)) {
    const json = written(key) ?? (JSON.stringify(value[key]) as string | undefined);
    // JSON.stringify leaves out what it cannot write (undefined, functions); so does this.
    if (json === undefined) {
      continue;
    }
    pieces.push(`${pieces.length > 1 ? ',' : ''}${JSON.stringify(key)}:`);
    if (typeof json === 'string') {
      pieces.push(json);
    } else {
      pieces.push(...json);
    }
  }
  pieces.push('}');
  return pieces;
}

/** JSON of a tool answer's content when it is the one text holding its structured JSON, per structured object. */
const contentJson = new WeakMap<object, string>();

/**
 * JSON of `content` when it is `[{ type: 'text', text }]` with the text the answer's JSON: the
 * same for every answer of the same structured object (an answer given again, see the
 * availability tools' answer-memo.ts), so it is escaped once, not per call.
 */
function contentOf(content: unknown, answer: EncodedAnswer): string | undefined {
  if (!Array.isArray(content) || content.length !== 1) {
    return undefined;
  }
  const item = content[0] as Record<string, unknown> | null;
  if (typeof item !== 'object' || item === null || item.type !== 'text' || item.text !== answer.json) {
    return undefined;
  }
  const keys = Object.keys(item);
  if (keys.length !== 2 || keys[0] !== 'type' || keys[1] !== 'text') {
    return undefined;
  }
  let json = contentJson.get(answer.structured);
  if (json === undefined) {
    json = JSON.stringify(content);
    contentJson.set(answer.structured, json);
  }
  return json;
}

/**
 * A JSON-RPC message as pieces of text that join to exactly what `JSON.stringify(message)` gives,
 * with a tool answer's structuredContent taken from the JSON the call already made when the SDK's
 * validated copy of it still holds the same values (it copies the object, not what is inside).
 */
function jsonRpcPieces(message: JSONRPCMessage, answer: EncodedAnswer | undefined): string[] {
  const result = (message as { result?: unknown }).result;
  if (
    answer === undefined ||
    typeof result !== 'object' ||
    result === null ||
    !sameShallow((result as { structuredContent?: unknown }).structuredContent, answer.structured)
  ) {
    return [JSON.stringify(message)];
  }
  const record = result as Record<string, unknown>;
  return writeObject(message as Record<string, unknown>, (key) =>
    key === 'result'
      ? writeObject(record, (inner) =>
          inner === 'structuredContent'
            ? answer.json
            : inner === 'content'
              ? contentOf(record.content, answer)
              : undefined,
        )
      : undefined,
  );
}

/** The text of a JSON-RPC message (see jsonRpcPieces). */
export function jsonRpcText(message: JSONRPCMessage, answer: EncodedAnswer | undefined): string {
  return jsonRpcPieces(message, answer).join('');
}

/**
 * The UTF-8 bytes of jsonRpcText, written piece by piece into one buffer: the answer's text is
 * never joined into one more string of its full size first.
 */
export function jsonRpcBytes(message: JSONRPCMessage, answer: EncodedAnswer | undefined): Buffer {
  const pieces = jsonRpcPieces(message, answer);
  let size = 0;
  for (const piece of pieces) {
    size += Buffer.byteLength(piece);
  }
  const bytes = Buffer.allocUnsafe(size);
  let at = 0;
  for (const piece of pieces) {
    at += bytes.write(piece, at);
  }
  return bytes;
}
