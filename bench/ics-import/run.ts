/**
 * import_events of a 10,000-event iCalendar file (BENCH_EVENTS) into a local calendar over real
 * PostgreSQL, through the MCP server with the official SDK client (in-memory transport, so the
 * HTTP layer is left out): the first import (inserts) and the same file again (updates), with
 * the process's peak RSS. Every 10th event is a weekly series, every 50th has a moved occurrence.
 * Target: 10,000 events in at most 10 s. Appends to bench/results/ics-import.md (BENCH_RECORD=0
 * to only print).
 *
 *   npm run bench:ics-import
 */
import { appendFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { LocalCalendarProvider } from '@calgate/providers';
import { LocalEventStore, migrate, openDatabase, TenancyRepository } from '@calgate/store';
import { startPostgres } from '@calgate/testkit';
import { CalendarAccess, catalogue, createMcpServer } from '@calgate/tools';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { machineSummary, today } from '../lib/machine.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
const root = fileURLToPath(new URL('../../', import.meta.url));

function stamp(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

function feed(count: number): string {
  const lines = ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//Bench//EN'];
  const base = Date.parse('2026-01-05T08:00:00Z');
  for (let i = 0; i < count; i++) {
    const start = base + i * 3_600_000;
    lines.push(
      'BEGIN:VEVENT',
      `UID:bench-${i}@example.com`,
      'DTSTAMP:20260101T000000Z',
      `DTSTART;TZID=Europe/Berlin:${stamp(start).slice(0, -1)}`,
      `DTEND;TZID=Europe/Berlin:${stamp(start + 1_800_000).slice(0, -1)}`,
      `SUMMARY:Event ${i}`,
      `DESCRIPTION:Imported event number ${i}, with a little text to read.`,
      `LOCATION:Room ${i % 20}`,
    );
    if (i % 10 === 0) {
      lines.push('RRULE:FREQ=WEEKLY;COUNT=10');
    }
    lines.push('END:VEVENT');
    if (i % 50 === 0) {
      lines.push(
        'BEGIN:VEVENT',
        `UID:bench-${i}@example.com`,
        'DTSTAMP:20260101T000000Z',
        `RECURRENCE-ID;TZID=Europe/Berlin:${stamp(start + 7 * 86_400_000).slice(0, -1)}`,
        `DTSTART;TZID=Europe/Berlin:${stamp(start + 7 * 86_400_000 + 7_200_000).slice(0, -1)}`,
        `DTEND;TZID=Europe/Berlin:${stamp(start + 7 * 86_400_000 + 9_000_000).slice(0, -1)}`,
        `SUMMARY:Event ${i} (moved)`,
        'END:VEVENT',
      );
    }
  }
  lines.push('END:VCALENDAR', '');
  return lines.join('\r\n');
}

const postgres = await startPostgres();
const lines: string[] = [];
const say = (line = '') => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};
try {
  const db = openDatabase({ url: postgres.url });
  await migrate(db.pool);
  const tenancy = new TenancyRepository(db.prisma);
  const tenant = await tenancy.createTenant('Import');
  const calendar = await tenancy.createLocalCalendar(tenant.id, {
    summary: 'Bench',
    timeZone: 'Europe/Berlin',
  });
  const provider = new LocalCalendarProvider(new LocalEventStore(db));
  const access = new CalendarAccess(
    {
      tenantId: tenant.id,
      keyId: 'key_bench',
      toolsets: ['calendar', 'ics'],
      calendars: [
        {
          id: calendar.id,
          externalId: calendar.id,
          summary: 'Bench',
          timeZone: 'Europe/Berlin',
          primary: true,
          enabled: true,
          accessRole: 'owner',
          connectionId: calendar.connectionId,
          provider: 'local',
          auth: 'none',
          accountEmail: 'local',
          connectionStatus: 'active',
          canRead: true,
          canWrite: true,
        },
      ],
    },
    () => provider,
  );
  const text = feed(EVENTS);
  say(`## ${today()} — ${machineSummary()}`);
  say();
  say(
    `import_events of ${EVENTS.toLocaleString('en')} VEVENTs (${(Buffer.byteLength(text) / 1048576).toFixed(1)} MB; every 10th a weekly series, every 50th with a moved occurrence) into a local calendar over real PostgreSQL, through the MCP server and SDK client (in-memory transport). Target: ≤ 10 s.`,
  );
  say();
  say('| run | imported | updated | errors | seconds | peak RSS MB |');
  say('|---|---|---|---|---|---|');
  for (const run of ['first import', 'same file again']) {
    // A server per run, as the gateway makes one per request (each with its own work budget).
    const server = createMcpServer({
      catalogue: catalogue(),
      access,
      requestId: 'req_bench',
      version: 'bench',
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'bench', version: '1' });
    await client.connect(clientSide);
    const started = performance.now();
    const result = await client.callTool(
      { name: 'import_events', arguments: { calendarId: calendar.id, ics: text } },
      undefined,
      { timeout: 600_000 },
    );
    const seconds = (performance.now() - started) / 1000;
    await client.close();
    const answer = result.structuredContent as { imported: number; updated: number; errors: unknown[] };
    if (result.isError) {
      throw new Error(JSON.stringify(result.content));
    }
    say(
      `| ${run} | ${answer.imported} | ${answer.updated} | ${answer.errors.length} | ${seconds.toFixed(2)} | ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} |`,
    );
  }
  await db.close();
  if (process.env.BENCH_RECORD !== '0') {
    await mkdir(`${root}bench/results`, { recursive: true });
    await appendFile(`${root}bench/results/ics-import.md`, `\n${lines.join('\n')}\n`);
  }
} finally {
  await postgres.stop();
}
