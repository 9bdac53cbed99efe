import type { CalendarEvent, CalendarProvider } from '@calgate/providers';
import type { JSONRPCMessage, JSONRPCRequest, Transport } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import {
  CalendarAccess,
  catalogue,
  createMcpServer,
  directToolCall,
  type KeyCalendar,
  type SessionOptions,
  type ToolCallRecord,
} from '../src/index.ts';
import { keyCalendar } from './key-calendar.ts';

const events: CalendarEvent[] = Array.from({ length: 3 }, (_, i) => ({
  id: `evt${i}abcde`,
  status: 'confirmed',
  summary: `Meeting "${i}"\n`,
  start: { dateTime: `2026-12-0${i + 1}T09:00:00+01:00` },
  end: { dateTime: `2026-12-0${i + 1}T10:00:00+01:00` },
}));
const provider = {
  kind: 'local',
  readsLocally: true,
  async listEvents() {
    return { items: events };
  },
} as unknown as CalendarProvider;

function calendar(id: string): KeyCalendar {
  return keyCalendar({ id, timeZone: 'Europe/Berlin', primary: id === 'cal_a' });
}

function session(records: ToolCallRecord[], extra: Partial<SessionOptions> = {}): SessionOptions {
  const access = new CalendarAccess(
    {
      tenantId: 'tnt_1',
      keyId: 'key_1',
      calendars: [calendar('cal_a'), calendar('cal_b')],
      toolsets: ['calendar'],
    },
    () => provider,
  );
  return {
    catalogue: catalogue(),
    access,
    requestId: 'req_1',
    version: 'test',
    onCall: (record) => records.push({ ...record, latencyMs: 0 }),
    ...extra,
  };
}

/** The answer the MCP server built for the request gives, as the gateway's fallback path gets it. */
async function throughServer(options: SessionOptions, request: JSONRPCRequest): Promise<JSONRPCMessage> {
  const server = createMcpServer(options);
  let answer: (message: JSONRPCMessage) => void = () => {};
  const answered = new Promise<JSONRPCMessage>((resolve) => {
    answer = resolve;
  });
  const transport: Transport = {
    async start() {},
    async send(message) {
      answer(message);
    },
    async close() {},
  };
  await server.connect(transport);
  transport.onmessage?.(request);
  return answered;
}

const call = (params: Record<string, unknown>): JSONRPCRequest => ({
  jsonrpc: '2.0',
  id: 9,
  method: 'tools/call',
  params,
});

describe('directToolCall', () => {
  it('answers a tool call exactly as the MCP server does, and records it once', async () => {
    for (const params of [
      {
        name: 'list_events',
        arguments: { calendarId: 'cal_a', timeMin: '2026-12-01', timeMax: '2026-12-31' },
      },
      { name: 'list_calendars' },
      { name: 'list_events', arguments: { calendarId: 'cal_a', maxResults: 0 } },
      { name: 'list_events', arguments: { calendarId: 'cal_nope' } },
      { name: 'list_events', arguments: { calendarId: 'cal_a' }, _meta: {} },
    ]) {
      const viaServer: ToolCallRecord[] = [];
      const direct: ToolCallRecord[] = [];
      const expected = await throughServer(session(viaServer), call(params));
      const result = await directToolCall(session(direct), params, new AbortController().signal);
      expect(result).toBeDefined();
      expect(JSON.stringify({ result, jsonrpc: '2.0', id: 9 })).toBe(JSON.stringify(expected));
      expect(direct).toEqual(viaServer);
      expect(direct).toHaveLength(1);
    }
  });

  it('leaves every other request to the MCP server', () => {
    const signal = new AbortController().signal;
    const records: ToolCallRecord[] = [];
    for (const params of [
      undefined,
      [],
      { name: 'no_such_tool' },
      // In a toolset this key has not switched on: the server explains how to get it.
      { name: 'create_project', arguments: {} },
      { name: 42 },
      { name: 'list_events', arguments: [] },
      { name: 'list_events', arguments: 'cal_a' },
      { name: 'list_events', _meta: { progressToken: 'p1' } },
      { name: 'list_events', _meta: 'x' },
      { name: 'list_events', task: { ttl: 1000 } },
    ]) {
      expect(directToolCall(session(records), params, signal)).toBeUndefined();
    }
    expect(
      directToolCall(session(records, { logLevel: 'info' }), { name: 'list_events' }, signal),
    ).toBeUndefined();
    expect(records).toEqual([]);
  });
});
