/**
 * The same MCP load against any streamable HTTP server: each client initialises its own session
 * (a stateless server simply sends no session id), then calls one tool in a loop on its own
 * keep-alive connection until the time is up. Each client speaks HTTP/1.1 on a plain socket
 * (Content-Length or chunked answers), so the load costs little of the machine it shares with
 * the servers (node:http's client took ~0.45 ms of CPU per 43 KB answer, about a third of what
 * the gateway spends); answers may be JSON or an event stream.
 */
import { connect, type Socket } from 'node:net';

export interface McpTarget {
  /** The MCP endpoint, e.g. http://127.0.0.1:3000/mcp. */
  url: string;
  /** Extra headers, e.g. Authorization. */
  headers?: Record<string, string>;
  /** Speak MCP 2026-07-28 (no initialize; the `_meta` envelope and standard headers on every call). */
  revision?: '2026-07-28';
}

/** The per-request envelope of MCP 2026-07-28. */
const ENVELOPE_2026 = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'calgate-bench', version: '1' },
};

export interface LoadResult {
  calls: number;
  callsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Calls answered other than 200 with a non-error tool result. */
  errors: number;
  seconds: number;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** A view of the connection's buffer: valid until the client's next request. */
  body: Buffer;
}

const HEAD_END = Buffer.from('\r\n\r\n');
const CRLF = Buffer.from('\r\n');

/**
 * Where every connection's socket reads land (Node's `onread`): each read is copied out into
 * its connection's answer buffer at once, so one buffer serves them all.
 */
const READS = Buffer.allocUnsafe(256 * 1024);

/**
 * One keep-alive HTTP/1.1 connection that sends a request and reads its answer, one at a time.
 * Understands what MCP servers answer with: a Content-Length body or a chunked one (an event
 * stream that ends with the answer).
 *
 * Answers are read into one buffer per connection that is reused call after call (and an
 * answer's body is a view of it, valid until the next request): a load generator that made new
 * buffers per read and per answer (~40 KB each, 1,500 a second) spent its time in major garbage
 * collections — pauses of up to 35 ms that stalled every client at once and counted against
 * whichever server was being measured.
 */
class Connection {
  readonly #url: URL;
  #socket: Socket | undefined;
  #answer: Buffer = Buffer.allocUnsafe(64 * 1024);
  #length = 0;
  #waiting: { resolve: (answer: Answer) => void; reject: (error: Error) => void } | undefined;

  constructor(url: string) {
    this.#url = new URL(url);
  }

  #open(): Promise<Socket> {
    if (this.#socket !== undefined) {
      return Promise.resolve(this.#socket);
    }
    return new Promise((resolve, reject) => {
      const socket = connect(
        {
          port: Number(this.#url.port),
          host: this.#url.hostname,
          onread: {
            buffer: READS,
            callback: (bytes, buffer) => {
              this.#read(buffer, bytes);
              return true;
            },
          },
        },
        () => resolve(socket),
      );
      socket.setNoDelay(true);
      const fail = (error: Error) => {
        this.#socket = undefined;
        this.#length = 0;
        const waiting = this.#waiting;
        this.#waiting = undefined;
        waiting?.reject(error);
        reject(error);
      };
      socket.on('error', fail);
      socket.on('close', () => fail(new Error('the server closed the connection')));
      this.#socket = socket;
    });
  }

  #read(buffer: Uint8Array, bytes: number): void {
    if (this.#length + bytes > this.#answer.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.#answer.length * 2, this.#length + bytes));
      this.#answer.copy(grown, 0, 0, this.#length);
      this.#answer = grown;
    }
    this.#answer.set(buffer.subarray(0, bytes), this.#length);
    this.#length += bytes;
    this.#drain();
  }

  /** Resolves the waiting request once its whole answer is in the buffer. */
  #drain(): void {
    const data = this.#answer.subarray(0, this.#length);
    const headEnd = data.indexOf(HEAD_END);
    if (headEnd === -1 || this.#waiting === undefined) {
      return;
    }
    const lines = data.toString('latin1', 0, headEnd).split('\r\n');
    const status = Number(lines[0]?.split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const bodyStart = headEnd + HEAD_END.length;
    let bodyEnd = bodyStart;
    if (headers['transfer-encoding'] === 'chunked') {
      // Complete once the last (empty) chunk is in; the chunks' data is then moved together.
      const chunks: [number, number][] = [];
      for (let at = bodyStart; ; ) {
        const lineEnd = data.indexOf(CRLF, at);
        if (lineEnd === -1) {
          return;
        }
        const size = Number.parseInt(data.toString('latin1', at, lineEnd), 16);
        const dataEnd = lineEnd + 2 + size;
        if (data.length < dataEnd + 2) {
          return;
        }
        if (size === 0) {
          break;
        }
        chunks.push([lineEnd + 2, dataEnd]);
        at = dataEnd + 2;
      }
      for (const [from, to] of chunks) {
        data.copyWithin(bodyEnd, from, to);
        bodyEnd += to - from;
      }
    } else {
      bodyEnd = bodyStart + Number(headers['content-length'] ?? 0);
      if (data.length < bodyEnd) {
        return;
      }
    }
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting.resolve({ status, headers, body: data.subarray(bodyStart, bodyEnd) });
  }

  async post(path: string, headers: Record<string, string>, body: string): Promise<Answer> {
    const socket = await this.#open();
    // The previous answer (and the view of its body) is done with: its buffer takes the next.
    this.#length = 0;
    const length = Buffer.byteLength(body);
    let head = `POST ${path} HTTP/1.1\r\nhost: ${this.#url.host}\r\ncontent-length: ${length}\r\n`;
    for (const [name, value] of Object.entries(headers)) {
      head += `${name}: ${value}\r\n`;
    }
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
      socket.write(`${head}\r\n${body}`);
    });
  }

  close(): void {
    this.#socket?.destroy();
    this.#socket = undefined;
  }
}

function post(
  connection: Connection,
  target: McpTarget,
  headers: Record<string, string>,
  body: string,
): Promise<Answer> {
  const url = new URL(target.url);
  return connection.post(
    `${url.pathname}${url.search}`,
    {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...target.headers,
      ...headers,
    },
    body,
  );
}

/** The JSON-RPC message of an answer sent as JSON or as one event of an event stream. */
export function messageOf(answer: Answer): { result?: Record<string, unknown>; error?: unknown } {
  const text = answer.body.toString('utf8');
  const type = String(answer.headers['content-type'] ?? '');
  if (type.startsWith('text/event-stream')) {
    const data = text
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => line.slice(6))
      .find((line) => line.includes('"result"') || line.includes('"error"'));
    if (data === undefined) {
      throw new Error(`no JSON-RPC answer in the event stream: ${text.slice(0, 300)}`);
    }
    return JSON.parse(data);
  }
  return JSON.parse(text);
}

const IS_ERROR = Buffer.from('"isError":true');

/** One client: its own connection and session. */
export class McpClient {
  readonly #connection: Connection;
  readonly #target: McpTarget;
  #session: Record<string, string> = {};
  #id = 0;

  constructor(target: McpTarget) {
    this.#target = target;
    this.#connection = new Connection(target.url);
  }

  async initialize(): Promise<void> {
    if (this.#target.revision === '2026-07-28') {
      // No handshake: every request says what it is.
      this.#session = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' };
      return;
    }
    const answer = await post(
      this.#connection,
      this.#target,
      { 'mcp-protocol-version': '2025-06-18' },
      JSON.stringify({
        jsonrpc: '2.0',
        id: ++this.#id,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'calgate-bench', version: '1' },
        },
      }),
    );
    if (answer.status !== 200) {
      throw new Error(`initialize answered ${answer.status}: ${answer.body.toString().slice(0, 300)}`);
    }
    const session = answer.headers['mcp-session-id'];
    this.#session = {
      'mcp-protocol-version': '2025-06-18',
      ...(typeof session === 'string' ? { 'mcp-session-id': session } : {}),
    };
    await post(
      this.#connection,
      this.#target,
      this.#session,
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    );
  }

  /** The raw answer of one tool call. */
  call(name: string, args: Record<string, unknown>): Promise<Answer> {
    const modern = this.#target.revision === '2026-07-28';
    return post(
      this.#connection,
      this.#target,
      modern ? { ...this.#session, 'mcp-name': name } : this.#session,
      JSON.stringify({
        jsonrpc: '2.0',
        id: ++this.#id,
        method: 'tools/call',
        params: modern ? { name, arguments: args, _meta: ENVELOPE_2026 } : { name, arguments: args },
      }),
    );
  }

  close(): void {
    this.#connection.close();
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/** `clients` clients call the tool back to back for `seconds`; latencies are whole calls. */
export async function runLoad(
  clients: McpClient[],
  tool: { name: string; args: Record<string, unknown> },
  seconds: number,
): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    clients.map(async (client) => {
      while (performance.now() < deadline) {
        const before = performance.now();
        try {
          const answer = await client.call(tool.name, tool.args);
          latencies.push(performance.now() - before);
          if (answer.status !== 200 || answer.body.indexOf(IS_ERROR) !== -1) {
            errors++;
          }
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    calls: latencies.length,
    callsPerSecond: latencies.length / elapsed,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    errors,
    seconds: elapsed,
  };
}
