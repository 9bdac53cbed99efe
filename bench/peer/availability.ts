/**
 * find_free_time beside the peer's get-freebusy (`@cocal/google-calendar-mcp`) on the same
 * emulator calendar, side by side in one run: 16 MCP clients (each its own session and keep-alive
 * connection) ask for the busy time of the same month for BENCH_DURATION seconds, against each
 * server in turn, BENCH_RUNS times; the peer with and without a `timeZone`. Calgate answers the
 * Google calendar from its mirror (checked: the answer carries `syncedAt`); also find_free_time of
 * a local calendar with the same events. Targets: ≥ 3× the peer's calls/s, with and without
 * `timeZone`, and p99 ≤ 25 ms.
 *
 * Processes as in bench/peer/run.ts (emulator, gateway with PostgreSQL and Redis, worker, peer,
 * and the load from this process). Prints medians of the runs and appends them to
 * bench/results/peer-availability.md (BENCH_RECORD=0 to only print). For Calgate's sides it also
 * counts what each call cost its Redis (commands, those its scripts run included) and PostgreSQL
 * (transactions). BENCH_SIDES=mirror,peer measures only the sides whose names hold those words.
 *
 *   npm run bench:peer-availability    (BENCH_DURATION=10 BENCH_RUNS=3 BENCH_CLIENTS=16 BENCH_WARMUP=20)
 */
import { appendFile, mkdir } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '@calgate/store';
import { Redis } from 'ioredis';
import { machineSummary, today } from '../lib/machine.ts';
import { GATEWAY_NODE_FLAGS } from '../lib/stack.ts';
import { CALENDAR, EVENTS, startEmulatorProcess, startGoogleBenchStack } from './emulator.ts';
import { type LoadResult, McpClient, type McpTarget, messageOf, runLoad } from './load.ts';
import { startPeer } from './peer-server.ts';
import {
  commandOf,
  cpuSecondsOf,
  cpuSecondsSince,
  cpuSnapshot,
  descendantsOf,
  quiet,
  rssPeak,
} from './procs.ts';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 16);
// Long enough for every server's hot code to be optimised: the gateway's first ~20 s under this
// load run partly unoptimised code (slower calls, more young objects surviving into the old
// generation), which is start-up, not the steady state the targets are about.
const WARMUP_S = Number(process.env.BENCH_WARMUP ?? 20);
const root = fileURLToPath(new URL('../../', import.meta.url));
// The gateway runs with the image's flags (GATEWAY_NODE_FLAGS); BENCH_GATEWAY_NODE_ARGS adds to
// them (later flags win), e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
const nodeArgs = (process.env.BENCH_GATEWAY_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
// BENCH_SIDES=mirror,peer (substrings of the sides' names) measures only those sides.
const ONLY = (process.env.BENCH_SIDES ?? '').split(',').filter((part) => part !== '');
const WINDOW = { timeMin: '2026-12-01T00:00:00Z', timeMax: '2027-01-01T00:00:00Z' };
const ZONE = 'Europe/Berlin';

interface Measured extends LoadResult {
  /** CPU of the server process per call, ms. */
  cpuMsPerCall: number;
  /** CPU of its helper processes (Calgate: PostgreSQL and Redis) per call, ms. */
  helperCpuMsPerCall: number;
  /**
   * CPU of this process (the load generator) per call, ms: the same work per answer of the same
   * size in every recording, so it gauges how fast the shared machine ran (higher: slower).
   */
  loadCpuMsPerCall: number;
  peakRssMb: number;
  /** Commands Redis ran per call (Calgate's sides; the worker's few included). */
  redisCommandsPerCall: number;
  /** PostgreSQL transactions (each statement outside one is one) per call, as above. */
  postgresXactsPerCall: number;
}

/** What Calgate's PostgreSQL and Redis have done so far, to count their work per call. */
interface Counters {
  redisCommands: number;
  postgresXacts: number;
}

interface Side {
  name: string;
  target: McpTarget;
  pid: number;
  /** Processes working for the server, measured apart (PostgreSQL and Redis for Calgate). */
  helpers: () => Promise<number[]>;
  tool: { name: string; args: Record<string, unknown> };
  /** Calgate's sides: the work of its PostgreSQL and Redis so far. */
  counters?: () => Promise<Counters>;
  /** Throws unless the answer lists the benchmark's events. */
  check: (message: ReturnType<typeof messageOf>) => void;
}

async function clientsFor(side: Side): Promise<McpClient[]> {
  const clients = Array.from({ length: CLIENTS }, () => new McpClient(side.target));
  await Promise.all(clients.map((client) => client.initialize()));
  const first = clients[0] as McpClient;
  side.check(messageOf(await first.call(side.tool.name, side.tool.args)));
  return clients;
}

async function measure(side: Side, clients: McpClient[]): Promise<Measured> {
  const settled = await quiet(process.pid);
  process.stderr.write(`${side.name}: the machine was quiet after ${settled.toFixed(1)} s\n`);
  const helpers = await side.helpers();
  const peak = rssPeak(side.pid);
  const cpuBefore = await cpuSecondsOf(side.pid);
  const helperBefore = await cpuSnapshot(helpers);
  const countersBefore = await side.counters?.();
  const loadBefore = process.cpuUsage();
  const load = await runLoad(clients, side.tool, DURATION_S);
  const loadCpu = process.cpuUsage(loadBefore);
  const cpu = (await cpuSecondsOf(side.pid)) - cpuBefore;
  const helperCpu = await cpuSecondsSince(helperBefore);
  const calls = Math.max(load.calls, 1);
  const peakRss = await peak.stop();
  let countersAfter: Counters | undefined;
  if (side.counters !== undefined) {
    await new Promise((resolve) => setTimeout(resolve, 1500));
    countersAfter = await side.counters();
  }
  return {
    ...load,
    cpuMsPerCall: (cpu * 1000) / calls,
    helperCpuMsPerCall: (helperCpu * 1000) / calls,
    loadCpuMsPerCall: (loadCpu.user + loadCpu.system) / 1000 / calls,
    peakRssMb: peakRss / 2 ** 20,
    redisCommandsPerCall:
      ((countersAfter?.redisCommands ?? 0) - (countersBefore?.redisCommands ?? 0)) / calls,
    postgresXactsPerCall:
      ((countersAfter?.postgresXacts ?? 0) - (countersBefore?.postgresXacts ?? 0)) / calls,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function medianOf(runs: Measured[]): Measured {
  const pick = (key: keyof Measured) => median(runs.map((run) => run[key]));
  return {
    calls: pick('calls'),
    callsPerSecond: pick('callsPerSecond'),
    p50Ms: pick('p50Ms'),
    p99Ms: pick('p99Ms'),
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
    seconds: pick('seconds'),
    cpuMsPerCall: pick('cpuMsPerCall'),
    helperCpuMsPerCall: pick('helperCpuMsPerCall'),
    loadCpuMsPerCall: pick('loadCpuMsPerCall'),
    peakRssMb: Math.max(...runs.map((run) => run.peakRssMb)),
    redisCommandsPerCall: pick('redisCommandsPerCall'),
    postgresXactsPerCall: pick('postgresXactsPerCall'),
  };
}

/** As calgateCheck, and the answer came from the mirror (it says which sync it reflects). */
function mirroredCheck(message: ReturnType<typeof messageOf>): void {
  calgateCheck(message);
  const out = message.result?.structuredContent as { syncedAt?: unknown } | undefined;
  if (typeof out?.syncedAt !== 'string') {
    throw new Error('Calgate answered the Google calendar from Google, not from its mirror');
  }
}

/** Reads the Google calendar through Calgate until its mirror answers (the worker's first sync). */
async function mirrorReady(side: Side): Promise<void> {
  const client = new McpClient(side.target);
  await client.initialize();
  try {
    for (const until = Date.now() + 60_000; ; ) {
      const message = messageOf(await client.call(side.tool.name, side.tool.args));
      const syncedAt = (message.result?.structuredContent as { syncedAt?: unknown } | undefined)?.syncedAt;
      if (typeof syncedAt === 'string') {
        return;
      }
      if (Date.now() > until) {
        throw new Error('the mirror of the Google calendar did not fill within 60 s');
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  } finally {
    client.close();
  }
}

/** The busy blocks of a Calgate find_free_time answer: one per event (none overlap). */
function calgateCheck(message: ReturnType<typeof messageOf>): void {
  const busy = (message.result?.structuredContent as { busy?: unknown[] } | undefined)?.busy;
  if (message.result?.isError === true || busy?.length !== EVENTS) {
    throw new Error(`Calgate did not find ${EVENTS} busy blocks: ${JSON.stringify(message).slice(0, 400)}`);
  }
}

/** The peer's answer names the busy blocks as text: one line per event. */
function peerCheck(message: ReturnType<typeof messageOf>): void {
  const text = JSON.stringify(message.result ?? message);
  const blocks = (text.match(/2026-12-\d\d[T ]\d\d:\d\d/g) ?? []).length;
  if (message.result?.isError === true || blocks < EVENTS) {
    throw new Error(`the peer did not answer ${EVENTS} busy blocks: ${text.slice(0, 400)}`);
  }
}

const emulator = await startEmulatorProcess();
const { stack, googleCalendarId } = await startGoogleBenchStack(emulator, nodeArgs);
const peer = await startPeer(emulator).catch(async (error: unknown) => {
  await stack.stop();
  await emulator.stop();
  throw error;
});
const lines: string[] = [];
const say = (line = '') => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};
// Calgate's PostgreSQL and Redis, asked what they did (see counters).
const redis = new Redis(stack.redisUrl, { lazyConnect: true });
const counting = openDatabase({ url: stack.databaseUrl, max: 1 });
try {
  await redis.connect();
  const calgateTarget = {
    url: `${stack.base}/api/mcp`,
    headers: { authorization: `Bearer ${stack.secret}` },
  };
  // PostgreSQL (with its backends) and Redis are children of this process, started by the
  // testkit; so are the gateway, the worker, the emulator and the peer, which are not counted here.
  const calgateHelpers = async () => {
    const helpers: number[] = [];
    for (const pid of await descendantsOf(process.pid)) {
      const command = await commandOf(pid);
      if (command === 'postgres' || command?.startsWith('redis') === true) {
        helpers.push(pid);
      }
    }
    return helpers;
  };
  // PostgreSQL publishes a busy backend's counts within about a second (measure waits for that).
  const counters = async (): Promise<Counters> => {
    const info = await redis.info('stats');
    const rows = await counting.pool.query<{ n: string }>(
      'SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()',
    );
    return {
      redisCommands: Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? 0),
      postgresXacts: Number(rows.rows[0]?.n ?? 0),
    };
  };
  const allSides: Side[] = [
    {
      name: 'Calgate find_free_time, emulator calendar (mirror)',
      target: calgateTarget,
      pid: stack.pid,
      helpers: calgateHelpers,
      counters,
      tool: { name: 'find_free_time', args: { calendarIds: [googleCalendarId], ...WINDOW, timeZone: ZONE } },
      check: mirroredCheck,
    },
    {
      name: `peer ${peer.version} get-freebusy, emulator calendar`,
      target: { url: peer.url },
      pid: peer.pid,
      helpers: async () => [],
      tool: { name: 'get-freebusy', args: { calendars: [{ id: CALENDAR }], ...WINDOW } },
      check: peerCheck,
    },
    {
      name: `peer ${peer.version} get-freebusy with timeZone, emulator calendar`,
      target: { url: peer.url },
      pid: peer.pid,
      helpers: async () => [],
      tool: {
        name: 'get-freebusy',
        args: {
          calendars: [{ id: CALENDAR }],
          timeMin: '2026-12-01T00:00:00',
          timeMax: '2027-01-01T00:00:00',
          timeZone: ZONE,
        },
      },
      check: peerCheck,
    },
    {
      name: 'Calgate find_free_time, local calendar',
      target: calgateTarget,
      pid: stack.pid,
      helpers: calgateHelpers,
      counters,
      tool: { name: 'find_free_time', args: { calendarIds: [stack.calendar.id], ...WINDOW, timeZone: ZONE } },
      check: calgateCheck,
    },
  ];
  const sides = allSides.filter((side) => ONLY.length === 0 || ONLY.some((part) => side.name.includes(part)));
  const loadBefore = loadavg();
  await mirrorReady(allSides[0] as Side);
  const sessions = new Map<Side, McpClient[]>();
  for (const side of sides) {
    const clients = await clientsFor(side);
    sessions.set(side, clients);
    await runLoad(clients, side.tool, WARMUP_S);
  }
  const runs = new Map<Side, Measured[]>(sides.map((side) => [side, []]));
  for (let run = 1; run <= RUNS; run++) {
    for (const side of sides) {
      const result = await measure(side, sessions.get(side) ?? []);
      runs.get(side)?.push(result);
      process.stderr.write(
        `run ${run} ${side.name}: ${result.callsPerSecond.toFixed(0)} calls/s, p50 ${result.p50Ms.toFixed(1)} ms, p99 ${result.p99Ms.toFixed(1)} ms, ${result.cpuMsPerCall.toFixed(2)} ms CPU/call, RSS ${result.peakRssMb.toFixed(0)} MB, ${result.errors} errors, load generator ${result.loadCpuMsPerCall.toFixed(3)} ms CPU/call\n`,
      );
    }
  }
  for (const clients of sessions.values()) {
    for (const client of clients) {
      client.close();
    }
  }
  const medians = new Map(sides.map((side) => [side, medianOf(runs.get(side) ?? [])]));
  const [calgateGoogle, peerPlain, peerZoned, calgateLocal] = allSides.map((side) => medians.get(side));
  say(`## ${today()} — ${machineSummary()}`);
  say();
  say(
    `find_free_time (Calgate) and get-freebusy (peer) over one month with ${EVENTS} events, ${CLIENTS} MCP clients (a session and keep-alive connection each), ${WARMUP_S} s of warm-up per side, ${DURATION_S} s per run, each once every process of the bench was quiet, medians of ${RUNS} runs (peak RSS: the highest). Emulator, gateway (+ PostgreSQL, Redis), Calgate worker (mirror syncs), peer and load generator are separate processes on the same machine; gateway node ${[...GATEWAY_NODE_FLAGS, ...nodeArgs].join(' ')}.`,
  );
  say();
  say(
    '| server | calls/s | p50 ms | p99 ms | errors | server CPU ms/call | PostgreSQL + Redis CPU ms/call | Redis commands/call | PostgreSQL transactions/call | peak RSS MB | load generator CPU ms/call |',
  );
  say('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const side of sides) {
    const m = medians.get(side) as Measured;
    const calgate = side.counters !== undefined;
    say(
      `| ${side.name} | ${m.callsPerSecond.toFixed(0)} | ${m.p50Ms.toFixed(1)} | ${m.p99Ms.toFixed(1)} | ${m.errors} | ${m.cpuMsPerCall.toFixed(2)} | ${calgate ? m.helperCpuMsPerCall.toFixed(2) : '–'} | ${calgate ? m.redisCommandsPerCall.toFixed(2) : '–'} | ${calgate ? m.postgresXactsPerCall.toFixed(3) : '–'} | ${m.peakRssMb.toFixed(0)} | ${m.loadCpuMsPerCall.toFixed(3)} |`,
    );
  }
  const met = (ok: boolean) => (ok ? 'met' : '**missed**');
  say();
  if (calgateGoogle !== undefined && peerPlain !== undefined && peerZoned !== undefined) {
    const plain = calgateGoogle.callsPerSecond / Math.max(peerPlain.callsPerSecond, 1e-9);
    const zoned = calgateGoogle.callsPerSecond / Math.max(peerZoned.callsPerSecond, 1e-9);
    say(
      `Emulator calendar: Calgate ${plain.toFixed(1)}× the peer's calls/s, ${zoned.toFixed(1)}× with the peer given timeZone (target ≥ 3× both: ${met(plain >= 3 && zoned >= 3)}); p99 ${calgateGoogle.p99Ms.toFixed(1)} ms (target ≤ 25: ${met(calgateGoogle.p99Ms <= 25)}).`,
    );
  }
  if (calgateLocal !== undefined) {
    say(
      `Local calendar: ${calgateLocal.callsPerSecond.toFixed(0)} calls/s, p99 ${calgateLocal.p99Ms.toFixed(1)} ms. Load generator ${calgateLocal.loadCpuMsPerCall.toFixed(3)} ms of CPU per local answer (a higher figure means the shared machine ran slower).`,
    );
  }
  // CPU per answer moves far less with other work on the machine than calls/s and tails do.
  if (calgateGoogle !== undefined && peerPlain !== undefined && peerZoned !== undefined) {
    const work = calgateGoogle.cpuMsPerCall + calgateGoogle.helperCpuMsPerCall;
    say(
      `CPU per answer (less sensitive to a shared machine): Calgate from the mirror ${work.toFixed(2)} ms (gateway ${calgateGoogle.cpuMsPerCall.toFixed(2)} + PostgreSQL and Redis ${calgateGoogle.helperCpuMsPerCall.toFixed(2)}), the peer ${peerPlain.cpuMsPerCall.toFixed(2)} ms (${peerZoned.cpuMsPerCall.toFixed(2)} with timeZone): ${(peerPlain.cpuMsPerCall / Math.max(work, 1e-9)).toFixed(2)}× (${(peerZoned.cpuMsPerCall / Math.max(work, 1e-9)).toFixed(2)}×) the peer's answers per CPU second.`,
    );
  }
  say(
    `Load average (1, 5, 15 min) ${loadBefore.map((l) => l.toFixed(1)).join(', ')} before, ${loadavg()
      .map((l) => l.toFixed(1))
      .join(', ')} after.`,
  );
  if (process.env.BENCH_RECORD !== '0') {
    await mkdir(`${root}bench/results`, { recursive: true });
    await appendFile(`${root}bench/results/peer-availability.md`, `\n${lines.join('\n')}\n`);
  }
} finally {
  redis.disconnect();
  await counting.close();
  await peer.stop();
  await stack.stop();
  await emulator.stop();
}
