/**
 * import_events of a 10,000-event iCalendar file into a local calendar over real PostgreSQL,
 * through the MCP server with the official SDK client (in-memory transport, so the HTTP layer is
 * left out): the first import (inserts) and the same file again (updates). Every 10th event is a
 * weekly series, every 50th has a moved occurrence, written at the end of the file (far from its
 * master). Each scenario runs in its own process so its memory is its own: the text given as
 * `ics` (10,000 events), and a feed given as `url` (10,000 and 50,000 events; the feed is written
 * as it is served, so the process holds none of it). RSS is sampled every 5 ms during each call:
 * the table shows the RSS before the call, the peak during it, and their difference.
 * Target: 10,000 events in at most 10 s, memory bounded. Appends to bench/results/ics-import.md
 * (BENCH_RECORD=0 to only print).
 *
 *   npm run bench:ics-import
 */
import { spawn } from 'node:child_process';
import { appendFile, mkdir } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { LocalCalendarProvider } from '@calgate/providers';
import { LocalEventStore, migrate, openDatabase, TenancyRepository } from '@calgate/store';
import { startPostgres } from '@calgate/testkit';
import { CalendarAccess, catalogue, createMcpServer } from '@calgate/tools';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { machineSummary, today } from '../lib/machine.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const SCENARIOS = [
  { source: 'ics', events: 10_000 },
  { source: 'url', events: 10_000 },
  { source: 'url', events: 50_000 },
] as const;

function stamp(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

/** The feed in pieces of a thousand events; the moved occurrences come last, far from their series. */
function* feed(count: number): Generator<string> {
  yield ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//Bench//EN', ''].join('\r\n');
  const base = Date.parse('2026-01-05T08:00:00Z');
  let lines: string[] = [];
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
    if (lines.length > 9000) {
      yield `${lines.join('\r\n')}\r\n`;
      lines = [];
    }
  }
  for (let i = 0; i < count; i += 50) {
    const start = base + i * 3_600_000;
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
  lines.push('END:VCALENDAR', '');
  yield lines.join('\r\n');
}

const mb = (bytes: number) => (bytes / 1048576).toFixed(0);

/** One scenario in this process: prints one table row per run as a JSON line. */
async function child(source: 'ics' | 'url', events: number): Promise<void> {
  const postgres = await startPostgres();
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/calendar' });
    const pieces = feed(events);
    const next = () => {
      for (let piece = pieces.next(); !piece.done; piece = pieces.next()) {
        if (!response.write(piece.value)) {
          response.once('drain', next);
          return;
        }
      }
      response.end();
    };
    next();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
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
    const text = source === 'ics' ? [...feed(events)].join('') : undefined;
    const args =
      text === undefined
        ? { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/bench.ics` }
        : { ics: text };
    for (const run of ['first import', 'same file again']) {
      // A server per run, as the gateway makes one per request (each with its own work budget).
      const mcp = createMcpServer({
        catalogue: catalogue(),
        access,
        requestId: 'req_bench',
        version: 'bench',
        outbound: { allowPrivate: true },
      });
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await mcp.connect(serverSide);
      const client = new Client({ name: 'bench', version: '1' });
      await client.connect(clientSide);
      const before = process.memoryUsage().rss;
      let peak = before;
      const sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage().rss);
      }, 5);
      const started = performance.now();
      const result = await client.callTool(
        { name: 'import_events', arguments: { calendarId: calendar.id, ...args } },
        undefined,
        { timeout: 600_000 },
      );
      const seconds = (performance.now() - started) / 1000;
      clearInterval(sampler);
      peak = Math.max(peak, process.memoryUsage().rss);
      await client.close();
      const answer = result.structuredContent as { imported: number; updated: number; errors: unknown[] };
      if (result.isError) {
        throw new Error(JSON.stringify(result.content));
      }
      process.stdout.write(
        `${JSON.stringify({
          row: `| ${source === 'ics' ? 'text (ics)' : 'feed (url)'} | ${events.toLocaleString('en')} | ${run} | ${answer.imported} | ${answer.updated} | ${answer.errors.length} | ${seconds.toFixed(2)} | ${mb(before)} | ${mb(peak)} | ${mb(peak - before)} |`,
        })}\n`,
      );
    }
    await db.close();
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await postgres.stop();
  }
}

async function parent(): Promise<void> {
  const lines: string[] = [];
  const say = (line = '') => {
    lines.push(line);
    process.stdout.write(`${line}\n`);
  };
  const text = [...feed(10_000)].join('');
  say(`## ${today()} — ${machineSummary()}, load ${loadavg()[0]?.toFixed(2)} at the start`);
  say();
  say(
    `import_events into a local calendar over real PostgreSQL, through the MCP server and SDK client (in-memory transport): 10,000 VEVENTs are ${(Buffer.byteLength(text) / 1048576).toFixed(1)} MB; every 10th a weekly series, every 50th with a moved occurrence written at the end of the file. Each scenario in its own process; RSS sampled every 5 ms during the call. Target: ≤ 10 s for 10,000 events, memory bounded.`,
  );
  say();
  say(
    '| source | events | run | imported | updated | errors | seconds | RSS before MB | peak RSS MB | peak − before MB |',
  );
  say('|---|---|---|---|---|---|---|---|---|---|');
  for (const scenario of SCENARIOS) {
    const output = await new Promise<string>((resolve, reject) => {
      const run = spawn(process.execPath, [fileURLToPath(import.meta.url)], {
        env: { ...process.env, BENCH_SCENARIO: `${scenario.source}:${scenario.events}` },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      run.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
      });
      run.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`scenario exited ${code}`))));
    });
    for (const line of output.split('\n').filter((l) => l.startsWith('{'))) {
      say((JSON.parse(line) as { row: string }).row);
    }
  }
  say(`\nload ${loadavg()[0]?.toFixed(2)} at the end.`);
  if (process.env.BENCH_RECORD !== '0') {
    await mkdir(`${root}bench/results`, { recursive: true });
    await appendFile(`${root}bench/results/ics-import.md`, `\n${lines.join('\n')}\n`);
  }
}

const scenario = process.env.BENCH_SCENARIO;
if (scenario === undefined) {
  await parent();
} else {
  const [source, events] = scenario.split(':');
  await child(source === 'url' ? 'url' : 'ics', Number(events));
}
