import type { CalendarProvider } from '@calgate/providers';
import { Client, InMemoryTransport, type Tool } from '@modelcontextprotocol/client';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { CalendarAccess, catalogue, createMcpServer, TOOL_DEFINITIONS } from '../src/index.ts';
import { keyCalendar } from './key-calendar.ts';

/**
 * What tools/list costs a key with the default toolsets, in o200k_base tokens: 4,500, down from
 * 9,476. Descriptions say when to use a tool; what else it does is in its notes
 * (`calgate://docs/tools`, /api/docs). Output schemas name the answer's top-level fields and
 * their types; input schemas leave out guard limits and `additionalProperties: false` (the
 * handlers enforce both); parameters many tools share (calendarId, calendarIds, scope,
 * sendUpdates, format, the range vocabulary) are explained once, in the server's instructions;
 * annotations leave out hints equal to MCP's defaults. The full schemas stay in /api/docs.
 */
const BUDGET = 4500;
/** What one tool of the whole catalogue may cost on average, so adding toolsets stays cheap. */
const PER_TOOL_BUDGET = 250;
/** What tools/list costs a key with the scheduler toolset alone (opt-in, like rules). */
const SCHEDULER_BUDGET = 2400;
/** A new key's toolsets (DEFAULT_TOOLSETS in @calgate/store). */
const DEFAULT_TOOLSETS = ['calendar', 'booking', 'search'];

/** tools/list as a key with read and write on one calendar and these toolsets (all when absent) sees it. */
async function listedTools(toolsets?: readonly string[]): Promise<Tool[]> {
  const access = new CalendarAccess(
    {
      tenantId: 'tnt_1',
      keyId: 'key_1',
      calendars: [keyCalendar({ id: 'cal_a', summary: 'A', primary: true, canWrite: true })],
      toolsets,
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
  return listed.tools;
}

function tokensOf(tools: readonly Tool[]): number {
  return encode(JSON.stringify({ tools })).length;
}

describe('tools/list size', () => {
  it(`a key with the default toolsets (${DEFAULT_TOOLSETS.join(', ')}) sees at most ${BUDGET} tokens`, async () => {
    const tools = await listedTools(DEFAULT_TOOLSETS);
    expect(tools.map((tool) => tool.name)).toEqual(
      TOOL_DEFINITIONS.filter((tool) => DEFAULT_TOOLSETS.includes(tool.toolset)).map((tool) => tool.name),
    );
    const tokens = tokensOf(tools);
    const perTool = tools.map((tool) => `${tool.name} ${encode(JSON.stringify(tool)).length}`).join(', ');
    console.info(`tools/list: ${tools.length} tools, ${tokens} tokens (o200k_base); ${perTool}`);
    expect(tokens).toBeLessThanOrEqual(BUDGET);
  });

  it(`a key with the scheduler toolset alone sees at most ${SCHEDULER_BUDGET} tokens, ${PER_TOOL_BUDGET} per tool on average`, async () => {
    const tools = await listedTools(['scheduler']);
    expect(tools.map((tool) => tool.name)).toEqual(
      TOOL_DEFINITIONS.filter((tool) => tool.toolset === 'scheduler').map((tool) => tool.name),
    );
    const tokens = tokensOf(tools);
    const perTool = tools.map((tool) => `${tool.name} ${encode(JSON.stringify(tool)).length}`).join(', ');
    console.info(`scheduler toolset: ${tools.length} tools, ${tokens} tokens; ${perTool}`);
    expect(tokens).toBeLessThanOrEqual(SCHEDULER_BUDGET);
    expect(tokens / tools.length).toBeLessThanOrEqual(PER_TOOL_BUDGET);
  });

  it(`the whole catalogue costs at most ${PER_TOOL_BUDGET} tokens per tool on average`, async () => {
    const tools = await listedTools();
    expect(tools.map((tool) => tool.name)).toEqual(TOOL_DEFINITIONS.map((tool) => tool.name));
    const average = tokensOf(tools) / tools.length;
    const byToolset = Object.entries(Object.groupBy(TOOL_DEFINITIONS, (tool) => tool.toolset)).map(
      ([toolset, members = []]) =>
        `${toolset} ${members.length} tools, ${tokensOf(tools.filter((tool) => members.some((m) => m.name === tool.name)))} tokens`,
    );
    console.info(`whole catalogue: ${average.toFixed(0)} tokens per tool; ${byToolset.join('; ')}`);
    expect(average).toBeLessThanOrEqual(PER_TOOL_BUDGET);
  });
});
