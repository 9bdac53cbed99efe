/**
 * Where the gateway's memory goes under bench:peer's list_events load: the same stack as
 * `npm run bench:peer` (emulator, gateway with the image's flags, worker filling the mirror,
 * PostgreSQL, Redis) without the peer; 16 clients list the mirrored Google calendar, then the local
 * calendar, then the local calendar over MCP 2026-07-28, each for BENCH_WARMUP + BENCH_DURATION
 * seconds. The gateway runs with an inspector: after each phase this prints its memoryUsage(), its
 * peak RSS (sampled every 100 ms), the largest size of each V8 heap space and its resident memory
 * by kind of mapping; at the end, memoryUsage() after a full collection.
 *
 *   node bench/peer/memory.ts   (BENCH_WARMUP=20 BENCH_DURATION=5 BENCH_CLIENTS=16)
 *
 * BENCH_SNAPSHOT=<file> (and BENCH_SNAPSHOT_IDLE=<file>, before the load) write heap snapshots;
 * BENCH_ALLOCATION=1 adds a sampled run per phase that prints allocation per call by function;
 * BENCH_NO_2026=1 leaves out the 2026-07-28 phase (for builds without that revision).
 */
import { freePort } from '@calgate/testkit';
import { EVENTS, startEmulatorProcess, startGoogleBenchStack } from './emulator.ts';
import { McpClient, type McpTarget, messageOf, runLoad } from './load.ts';
import { rssPeak } from './procs.ts';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 5);
const WARMUP_S = Number(process.env.BENCH_WARMUP ?? 20);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 16);
const WINDOW = { timeMin: '2026-12-01T00:00:00Z', timeMax: '2027-01-01T00:00:00Z' };
const MB = 2 ** 20;

interface AllocationNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: AllocationNode[];
}

/** One inspector session on the gateway: Runtime.evaluate and HeapProfiler commands. */
async function inspect(port: number) {
  const list = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  const socket = new WebSocket(list[0]?.webSocketDebuggerUrl ?? '');
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  let next = 1;
  const waiting = new Map<number, (result: unknown) => void>();
  socket.onmessage = (message) => {
    const data = JSON.parse(String(message.data)) as { id?: number; result?: unknown };
    if (data.id !== undefined) {
      waiting.get(data.id)?.(data.result);
      waiting.delete(data.id);
    }
  };
  const send = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<unknown>((resolve) => {
      const id = next++;
      waiting.set(id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
  const evaluate = async (expression: string) =>
    ((await send('Runtime.evaluate', { expression, returnByValue: true })) as { result: { value: unknown } })
      .result.value;
  return {
    memory: async () =>
      JSON.parse(String(await evaluate('JSON.stringify(process.memoryUsage())'))) as NodeJS.MemoryUsage,
    gc: () => send('HeapProfiler.collectGarbage'),
    spaces: async () =>
      JSON.parse(
        String(await evaluate("JSON.stringify(process.getBuiltinModule('v8').getHeapSpaceStatistics())")),
      ) as { space_name: string; space_size: number; space_used_size: number }[],
    evaluate,
    send,
    close: () => socket.close(),
  };
}

/** The process's resident memory by kind of mapping (from /proc/<pid>/smaps), MB. */
async function mappings(pid: number): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  const text = await readFile(`/proc/${pid}/smaps`, 'utf8');
  const sums = new Map<string, number>();
  let kind = '';
  for (const line of text.split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      const path = head[1] ?? '';
      kind =
        path === '' ? 'anon' : path.startsWith('[') ? path : path.includes('/node') ? 'node binary' : 'files';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) {
      sums.set(kind, (sums.get(kind) ?? 0) + Number(rss[1]) / 1024);
    }
  }
  return [...sums].map(([name, mb]) => `${name} ${mb.toFixed(1)}`).join(', ');
}

const fmt = (m: NodeJS.MemoryUsage) =>
  `rss ${(m.rss / MB).toFixed(1)} heapUsed ${(m.heapUsed / MB).toFixed(1)} heapTotal ${(m.heapTotal / MB).toFixed(1)} external ${(m.external / MB).toFixed(1)} arrayBuffers ${(m.arrayBuffers / MB).toFixed(1)}`;

const emulator = await startEmulatorProcess();
const inspectorPort = await freePort();
const { stack, googleCalendarId } = await startGoogleBenchStack(emulator, [
  `--inspect=127.0.0.1:${inspectorPort}`,
]);
const probe = await inspect(inspectorPort);
try {
  const target: McpTarget = {
    url: `${stack.base}/api/mcp`,
    headers: { authorization: `Bearer ${stack.secret}` },
  };
  const report = async (phase: string, peak?: number) => {
    const m = await probe.memory();
    process.stdout.write(
      `${phase}: ${fmt(m)}${peak === undefined ? '' : ` peakRSS ${(peak / MB).toFixed(1)}`}\n`,
    );
  };
  await new Promise((resolve) => setTimeout(resolve, 2000));
  await report('idle');
  if (process.env.BENCH_SNAPSHOT_IDLE) {
    await probe.evaluate(
      `process.getBuiltinModule('v8').writeHeapSnapshot(${JSON.stringify(process.env.BENCH_SNAPSHOT_IDLE)})`,
    );
  }
  const sides = [
    { name: 'google', target, calendarId: googleCalendarId, mirrored: true },
    { name: 'local', target, calendarId: stack.calendar.id, mirrored: false },
    ...(process.env.BENCH_NO_2026 === '1'
      ? []
      : [
          {
            name: 'local-2026',
            target: { ...target, revision: '2026-07-28' },
            calendarId: stack.calendar.id,
            mirrored: false,
          },
        ]),
  ];
  for (const side of sides) {
    const tool = { name: 'list_events', args: { calendarId: side.calendarId, ...WINDOW, maxResults: 50 } };
    const clients = Array.from({ length: CLIENTS }, () => new McpClient(side.target as McpTarget));
    await Promise.all(clients.map((client) => client.initialize()));
    for (const until = Date.now() + 60_000; ; ) {
      const out = messageOf(await (clients[0] as McpClient).call(tool.name, tool.args)).result
        ?.structuredContent as { events?: unknown[]; syncedAt?: unknown } | undefined;
      if (out?.events?.length === EVENTS && (!side.mirrored || typeof out.syncedAt === 'string')) {
        break;
      }
      if (Date.now() > until) {
        throw new Error(`${side.name}: no answer of ${EVENTS} events`);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const peak = rssPeak(stack.pid);
    let maxHeap = 0;
    let maxExternal = 0;
    const maxSpaces = new Map<string, number>();
    const poll = setInterval(() => {
      probe.memory().then(
        (m) => {
          maxHeap = Math.max(maxHeap, m.heapTotal);
          maxExternal = Math.max(maxExternal, m.external);
        },
        () => {},
      );
      probe.spaces().then(
        (spaces) => {
          for (const space of spaces) {
            maxSpaces.set(space.space_name, Math.max(maxSpaces.get(space.space_name) ?? 0, space.space_size));
          }
        },
        () => {},
      );
    }, 250);
    await runLoad(clients, tool, WARMUP_S);
    const result = await runLoad(clients, tool, DURATION_S);
    clearInterval(poll);
    if (process.env.BENCH_ALLOCATION === '1') {
      // All allocation of a further run (objects collected since included), per call and by function.
      await probe.send('HeapProfiler.startSampling', {
        samplingInterval: 4096,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true,
      });
      const sampled = await runLoad(clients, tool, DURATION_S);
      const { profile } = (await probe.send('HeapProfiler.stopSampling')) as {
        profile: { head: AllocationNode };
      };
      const byFunction = new Map<string, number>();
      let total = 0;
      const walk = (node: AllocationNode) => {
        const self = node.selfSize;
        total += self;
        const frame = node.callFrame;
        const key = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\/(node_modules|apps|packages)\//, '$1/')}:${frame.lineNumber + 1}`;
        byFunction.set(key, (byFunction.get(key) ?? 0) + self);
        for (const child of node.children) {
          walk(child);
        }
      };
      walk(profile.head);
      process.stdout.write(
        `  allocation: ${(total / 1024 / sampled.calls).toFixed(0)} KB per call over ${sampled.calls} calls\n`,
      );
      for (const [key, bytes] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
        process.stdout.write(`    ${(bytes / 1024 / sampled.calls).toFixed(1).padStart(6)} KB ${key}\n`);
      }
    }
    await report(
      `${side.name} (${result.callsPerSecond.toFixed(0)} calls/s, ${result.errors} errors, max heapTotal ${(maxHeap / MB).toFixed(1)}, max external ${(maxExternal / MB).toFixed(1)})`,
      await peak.stop(),
    );
    process.stdout.write(
      `  max space sizes: ${[...maxSpaces].map(([name, size]) => `${name.replace('_space', '')} ${(size / MB).toFixed(1)}`).join(', ')}\n`,
    );
    process.stdout.write(`  ${await mappings(stack.pid)}\n`);
    for (const client of clients) {
      client.close();
    }
  }
  await probe.gc();
  await report('after full GC');
  if (process.env.BENCH_SNAPSHOT) {
    await probe.evaluate(
      `process.getBuiltinModule('v8').writeHeapSnapshot(${JSON.stringify(process.env.BENCH_SNAPSHOT)})`,
    );
    process.stdout.write(`heap snapshot: ${process.env.BENCH_SNAPSHOT}\n`);
  }
} finally {
  probe.close();
  await stack.stop();
  await emulator.stop();
}
