/** MCP sessions of the benchmarks: the official SDK client over HTTP to a gateway, with a key. */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

/** Opens a session to `${gatewayUrl}/api/mcp` with `secret` and adds it to `sessions` (closed by the caller). */
export async function benchSession(gatewayUrl: string, secret: string, sessions: Client[]): Promise<Client> {
  const session = new Client({ name: 'bench', version: '1' });
  await session.connect(
    new StreamableHTTPClientTransport(new URL(`${gatewayUrl}/api/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${secret}` } },
    }),
  );
  sessions.push(session);
  return session;
}
