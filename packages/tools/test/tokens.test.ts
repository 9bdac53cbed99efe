import type { CalendarProvider } from '@calgate/providers';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { CalendarAccess, catalogue, createMcpServer, TOOL_DEFINITIONS } from '../src/index.ts';

/**
 * The whole catalogue's tools/list must stay within this many o200k_base tokens (9000 until
 * list_bookings and cancel_booking added ~540; 9400 until calendarIds and timeZone on every
 * availability tool and list_calendars' `default` added ~130; the range vocabulary itself is
 * explained once, in the server's instructions).
 */
const BUDGET = 9600;

describe('tools/list size', () => {
  it(`the full catalogue, as a key with read and write sees it, is at most ${BUDGET} tokens`, async () => {
    const access = new CalendarAccess(
      {
        tenantId: 'tnt_1',
        keyId: 'key_1',
        calendars: [
          {
            id: 'cal_a',
            externalId: 'cal_a',
            summary: 'A',
            timeZone: 'UTC',
            primary: true,
            enabled: true,
            accessRole: 'owner',
            connectionId: 'con_1',
            provider: 'local',
            auth: 'none',
            accountEmail: 'local',
            connectionStatus: 'active',
            canRead: true,
            canWrite: true,
          },
        ],
      },
      () => ({ kind: 'local' }) as unknown as CalendarProvider,
    );
    const server = createMcpServer({ catalogue: catalogue(), access, requestId: 'req_t', version: 'test' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'tokens', version: '1' });
    await client.connect(clientSide);
    const listed = await client.listTools();
    await client.close();

    expect(listed.tools.map((tool) => tool.name)).toEqual(TOOL_DEFINITIONS.map((tool) => tool.name));
    const payload = JSON.stringify({ tools: listed.tools });
    const tokens = encode(payload).length;
    const perTool = listed.tools
      .map((tool) => `${tool.name} ${encode(JSON.stringify(tool)).length}`)
      .join(', ');
    console.info(`tools/list: ${listed.tools.length} tools, ${tokens} tokens (o200k_base); ${perTool}`);
    expect(tokens).toBeLessThanOrEqual(BUDGET);
  });
});
