/**
 * What the write-tool tests (local calendars, Google) share: the write tools a key without a
 * write grant must not see, a call that returns the answer's parts (error or not), and a
 * calendar's events in a window as list_events returns them.
 */
import type { Client } from '@modelcontextprotocol/client';
import { textOf } from './harness.ts';

export const WRITE_TOOLS = [
  'create_event',
  'quick_add_event',
  'update_event',
  'batch_update_events',
  'manage_attendees',
  'respond_to_event',
  'delete_event',
  'create_calendar',
];

/** A write tool's structured answer, with the event (of the test's own shape `E`) it wrote. */
export type Out<E> = Record<string, unknown> & { event?: E; warnings?: { kind: string; message: string }[] };

export async function call<E>(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  return {
    result,
    isError: result.isError === true,
    text: textOf(result),
    out: result.structuredContent as Out<E>,
  };
}

export async function events<E>(
  client: Client,
  calendarId: string,
  timeMin: string,
  timeMax: string,
): Promise<E[]> {
  const { out } = await call<E>(client, 'list_events', { calendarId, timeMin, timeMax, maxResults: 500 });
  return (out as unknown as { events: E[] }).events;
}
