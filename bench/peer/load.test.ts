import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpClient, messageOf, runLoad } from './load.ts';

/**
 * A stand-in MCP endpoint that answers tools/call in the shapes servers use: JSON with a
 * Content-Length, or an event stream in chunks written apart (so answers arrive over several
 * reads), and answers larger than the connection's first buffer.
 */
let server: Server;
let url = '';
const big = 'x'.repeat(200_000);

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      const message = JSON.parse(body) as { id?: number; method: string; params?: { name?: string } };
      if (message.id === undefined) {
        response.writeHead(202).end();
        return;
      }
      const name = message.params?.name ?? message.method;
      const answer = (text: string, isError = false) =>
        JSON.stringify({
          jsonrpc: '2.0',
          id: message.id,
          result: { content: [{ type: 'text', text }], isError },
        });
      if (name === 'stream') {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        const event = `event: message\ndata: ${answer(`streamed ${message.id}`)}\n\n`;
        response.write(event.slice(0, 20));
        setTimeout(() => response.end(event.slice(20)), 5);
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' });
      response.end(name === 'big' ? answer(big) : answer(`${name} ${message.id}`, name === 'fail'));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const textOf = (answer: Awaited<ReturnType<McpClient['call']>>) =>
  (messageOf(answer).result?.content as { text: string }[] | undefined)?.[0]?.text;

describe('the load generator', () => {
  it('reads JSON answers, event streams in pieces and answers larger than its buffer, call after call', async () => {
    const client = new McpClient({ url });
    await client.initialize();
    expect(textOf(await client.call('plain', {}))).toBe('plain 2');
    expect(textOf(await client.call('stream', {}))).toBe('streamed 3');
    expect(textOf(await client.call('big', {}))).toBe(big);
    expect(textOf(await client.call('plain', {}))).toBe('plain 5');
    expect(textOf(await client.call('stream', {}))).toBe('streamed 6');
    client.close();
  });

  it('counts calls and tool errors under load', async () => {
    const clients = [new McpClient({ url }), new McpClient({ url })];
    await Promise.all(clients.map((client) => client.initialize()));
    const ok = await runLoad(clients, { name: 'plain', args: {} }, 0.3);
    expect(ok.calls).toBeGreaterThan(10);
    expect(ok.errors).toBe(0);
    const failing = await runLoad(clients, { name: 'fail', args: {} }, 0.2);
    expect(failing.errors).toBe(failing.calls);
    for (const client of clients) {
      client.close();
    }
  });
});
