/**
 * Calgate beside the best open peer, `@cocal/google-calendar-mcp`, on the same emulator calendar:
 * 16 MCP clients (each its own session and keep-alive connection) list the same 50 events of the
 * same month for BENCH_DURATION seconds, against each server in turn, BENCH_RUNS times. Also
 * list_events of a local calendar with the same events (targets: ≥ 1,500 calls/s, p99 ≤ 25 ms,
 * gateway RSS ≤ 250 MB, and ≥ 3× the peer's calls/s on the emulator calendar).
 *
 * Every server runs in its own process: the emulator, Calgate's gateway (with its PostgreSQL and
 * Redis), the peer; the load comes from this process. Each run starts once the machine is quiet (the
 * previous server's leftover work would count against the next). Prints medians of the runs and appends
 * them to bench/results/peer.md (BENCH_RECORD=0 to only print).
 *
 *   npm run bench:peer    (BENCH_DURATION=10 BENCH_RUNS=3 BENCH_CLIENTS=16 BENCH_WARMUP=20)
 */
import { appendFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
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
const WINDOW = { timeMin: '2026-12-01T00:00:00Z', timeMax: '2027-01-01T00:00:00Z' };

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
}

interface Side {
  name: string;
  target: McpTarget;
  pid: number;
  /** Processes working for the server, measured apart (PostgreSQL and Redis for Calgate). */
  helpers: () => Promise<number[]>;
  tool: { name: string; args: Record<string, unknown> };
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
  const loadBefore = process.cpuUsage();
  const load = await runLoad(clients, side.tool, DURATION_S);
  const loadCpu = process.cpuUsage(loadBefore);
  const cpu = (await cpuSecondsOf(side.pid)) - cpuBefore;
  const helperCpu = await cpuSecondsSince(helperBefore);
  const calls = Math.max(load.calls, 1);
  return {
    ...load,
    cpuMsPerCall: (cpu * 1000) / calls,
    helperCpuMsPerCall: (helperCpu * 1000) / calls,
    loadCpuMsPerCall: (loadCpu.user + loadCpu.system) / 1000 / calls,
    peakRssMb: (await peak.stop()) / 2 ** 20,
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

/** Counts the events in a Calgate list_events answer. */
function calgateCheck(message: ReturnType<typeof messageOf>): void {
  const events = (message.result?.structuredContent as { events?: unknown[] } | undefined)?.events;
  if (message.result?.isError === true || events?.length !== EVENTS) {
    throw new Error(`Calgate did not list ${EVENTS} events: ${JSON.stringify(message).slice(0, 400)}`);
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
try {
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
  const sides: Side[] = [
    {
      name: 'Calgate, emulator calendar',
      target: calgateTarget,
      pid: stack.pid,
      helpers: calgateHelpers,
      tool: { name: 'list_events', args: { calendarId: googleCalendarId, ...WINDOW, maxResults: 50 } },
      check: mirroredCheck,
    },
    {
      name: `peer ${peer.version}, emulator calendar`,
      target: { url: peer.url },
      pid: peer.pid,
      helpers: async () => [],
      tool: { name: 'list-events', args: { calendarId: CALENDAR, ...WINDOW } },
      check(message) {
        const text = JSON.stringify(message.result ?? message);
        const listed = (text.match(/Meeting \d+/g) ?? []).length;
        if (message.result?.isError === true || listed < EVENTS) {
          throw new Error(`the peer did not list ${EVENTS} events: ${text.slice(0, 400)}`);
        }
      },
    },
    {
      name: 'Calgate, local calendar',
      target: calgateTarget,
      pid: stack.pid,
      helpers: calgateHelpers,
      tool: { name: 'list_events', args: { calendarId: stack.calendar.id, ...WINDOW, maxResults: 50 } },
      check: calgateCheck,
    },
    {
      name: 'Calgate, local calendar, MCP 2026-07-28',
      target: { ...calgateTarget, revision: '2026-07-28' },
      pid: stack.pid,
      helpers: calgateHelpers,
      tool: { name: 'list_events', args: { calendarId: stack.calendar.id, ...WINDOW, maxResults: 50 } },
      check: calgateCheck,
    },
  ];
  await mirrorReady(sides[0] as Side);
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
  const [calgateGoogle, peerGoogle, calgateLocal, calgateLocal2026] = sides.map(
    (side) => medians.get(side) as Measured,
  ) as [Measured, Measured, Measured, Measured];
  say(`## ${today()} — ${machineSummary()}`);
  say();
  say(
    `list_events of ${EVENTS} events (one month), ${CLIENTS} MCP clients (a session and keep-alive connection each), ${WARMUP_S} s of warm-up per server, ${DURATION_S} s per run, each once every process of the bench was quiet, medians of ${RUNS} runs (peak RSS: the highest). Emulator, gateway (+ PostgreSQL, Redis), Calgate worker (mirror syncs), peer and load generator are separate processes on the same machine; gateway node ${[...GATEWAY_NODE_FLAGS, ...nodeArgs].join(' ')}.`,
  );
  say();
  say(
    '| server | calls/s | p50 ms | p99 ms | errors | server CPU ms/call | PostgreSQL + Redis CPU ms/call | peak RSS MB | load generator CPU ms/call |',
  );
  say('|---|---|---|---|---|---|---|---|---|');
  for (const side of sides) {
    const m = medians.get(side) as Measured;
    say(
      `| ${side.name} | ${m.callsPerSecond.toFixed(0)} | ${m.p50Ms.toFixed(1)} | ${m.p99Ms.toFixed(1)} | ${m.errors} | ${m.cpuMsPerCall.toFixed(2)} | ${side.name.startsWith('Calgate') ? m.helperCpuMsPerCall.toFixed(2) : '–'} | ${m.peakRssMb.toFixed(0)} | ${m.loadCpuMsPerCall.toFixed(3)} |`,
    );
  }
  const ratio = calgateGoogle.callsPerSecond / Math.max(peerGoogle.callsPerSecond, 1e-9);
  const cpuRatio = peerGoogle.cpuMsPerCall / Math.max(calgateGoogle.cpuMsPerCall, 1e-9);
  const met = (ok: boolean) => (ok ? 'met' : '**missed**');
  say();
  say(
    `Emulator calendar: Calgate ${ratio.toFixed(1)}× the peer's calls/s (target ≥ 3×: ${met(ratio >= 3)}), at 1/${cpuRatio.toFixed(1)} of its CPU per call (gateway process alone).`,
  );
  say(
    `Local calendar: ${calgateLocal.callsPerSecond.toFixed(0)} calls/s (target ≥ 1,500: ${met(calgateLocal.callsPerSecond >= 1500)}), p99 ${calgateLocal.p99Ms.toFixed(1)} ms (target ≤ 25: ${met(calgateLocal.p99Ms <= 25)}), gateway RSS ${calgateLocal.peakRssMb.toFixed(0)} MB (target ≤ 250: ${met(calgateLocal.peakRssMb <= 250)}).`,
  );
  const throughput2026 = calgateLocal2026.callsPerSecond / Math.max(calgateLocal.callsPerSecond, 1e-9);
  const p99Ratio2026 = calgateLocal2026.p99Ms / Math.max(calgateLocal.p99Ms, 1e-9);
  say(
    `Local calendar over MCP 2026-07-28: ${(throughput2026 * 100).toFixed(0)} % of the 2025 calls/s, p99 ${(p99Ratio2026 * 100).toFixed(0)} % of 2025's (target: within 10 %: ${met(throughput2026 >= 0.9 && p99Ratio2026 <= 1.1)}).`,
  );
  say(
    `Machine speed: the load generator spent ${calgateLocal.loadCpuMsPerCall.toFixed(3)} ms of CPU per local-calendar answer (the same work in every recording since the load generator reads into reused buffers — lower than in earlier recordings for that reason —; a higher figure means the shared machine ran slower during these runs).`,
  );
  if (process.env.BENCH_RECORD !== '0') {
    await mkdir(`${root}bench/results`, { recursive: true });
    await appendFile(`${root}bench/results/peer.md`, `\n${lines.join('\n')}\n`);
  }
} finally {
  await peer.stop();
  await stack.stop();
  await emulator.stop();
}
