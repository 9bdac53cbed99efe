/**
 * The same MCP load against any streamable HTTP server: each client initialises its own session
 * (a stateless server simply sends no session id), then calls one tool in a loop on its own
 * keep-alive connection until the time is up. Plain `node:http`, so the load costs little of the
 * machine it shares with the servers; answers may be JSON or an event stream.
 */
import { Agent, request } from 'node:http';

export interface McpTarget {
  /** The MCP endpoint, e.g. http://127.0.0.1:3000/mcp. */
  url: string;
  /** Extra headers, e.g. Authorization. */
  headers?: Record<string, string>;
}

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
  body: Buffer;
}

function post(
  agent: Agent,
  target: McpTarget,
  headers: Record<string, string>,
  body: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      target.url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': Buffer.byteLength(body),
          ...target.headers,
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
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
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 1 });
  readonly #target: McpTarget;
  #session: Record<string, string> = {};
  #id = 0;

  constructor(target: McpTarget) {
    this.#target = target;
  }

  async initialize(): Promise<void> {
    const answer = await post(
      this.#agent,
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
      this.#agent,
      this.#target,
      this.#session,
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    );
  }

  /** The raw answer of one tool call. */
  call(name: string, args: Record<string, unknown>): Promise<Answer> {
    return post(
      this.#agent,
      this.#target,
      this.#session,
      JSON.stringify({
        jsonrpc: '2.0',
        id: ++this.#id,
        method: 'tools/call',
        params: { name, arguments: args },
      }),
    );
  }

  close(): void {
    this.#agent.destroy();
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
