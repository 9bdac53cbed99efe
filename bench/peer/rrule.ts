/**
 * expand_rrule over MCP, Calgate against Temporal Cortex (`@temporal-cortex/cortex-mcp-linux-x64`,
 * its prebuilt server, run in HTTP mode on loopback), interleaved call by call: the same rule,
 * zone and count for both.
 *
 * - 10,000 instances as JSON and as TOON: Temporal Cortex answers them in one answer; Calgate in
 *   pages under 25,000 o200k tokens (pageToken / nextPageToken), fetched one after the other on
 *   one kept-alive connection as a client would. Timed are the first page and all pages.
 *   Calgate's JSON is measured for both protocol revisions: 2025-11-25 clients get the JSON text
 *   beside structuredContent, 2026-07-28 clients structuredContent alone.
 * - 20 instances on a new connection per call (a kept-alive connection's small answers can wait on
 *   Nagle and delayed ACK, which would flatter or hide a server's own time). Beside them, the
 *   runtime's floor: a bare `node:http` server answering Calgate's bytes with no work at all.
 *
 * Each round runs every case once for each server, the order of the servers alternating from
 * round to round. Prints medians and p90 per case and the bytes answered, and appends them to
 * bench/results/rrule-mcp.md (BENCH_RECORD=0 to only print).
 *
 *   npm run bench:rrule-mcp    (BENCH_CALLS=100 BENCH_WARMUP_CALLS=20)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { appendFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@calgate/testkit';
import { machineSummary, today } from '../lib/machine.ts';
import { GATEWAY_NODE_FLAGS, startBenchStack } from '../lib/stack.ts';
import { McpClient, type McpTarget, messageOf } from './load.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 100);
const WARMUP = Number(process.env.BENCH_WARMUP_CALLS ?? 20);
const root = fileURLToPath(new URL('../../', import.meta.url));
const nodeArgs = (process.env.BENCH_GATEWAY_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
const RULE = { rrule: 'FREQ=DAILY', dtstart: '2026-01-05T09:30:00', zone: 'America/New_York' };
const PEER_VERSION = '0.9.1';

/** Temporal Cortex's server in HTTP mode, with a home of its own (no configuration, no telemetry). */
async function startTemporalCortex(): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const binary = join(
    dirname(createRequire(import.meta.url).resolve('@temporal-cortex/cortex-mcp-linux-x64/package.json')),
    'bin/cortex-mcp',
  );
  const home = await mkdtemp(join(tmpdir(), 'cortex-home-'));
  const port = await freePort();
  const child: ChildProcess = spawn(binary, [], {
    env: { PATH: process.env.PATH ?? '', HOME: home, HTTP_PORT: String(port), TIMEZONE: RULE.zone },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const seen = (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('starting on http')) {
        resolve();
      }
    };
    child.stdout?.on('data', seen);
    child.stderr?.on('data', seen);
    child.once('exit', (code) =>
      reject(new Error(`Temporal Cortex exited (${code}) before listening: ${out}`)),
    );
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    pid: child.pid ?? 0,
    async stop() {
      child.kill('SIGTERM');
      await rm(home, { recursive: true, force: true });
    },
  };
}

/**
 * The floor of the runtime: a bare `node:http` server (another process, same Node) that answers
 * every POST with a fixed body — Calgate's own answer to the 20-instance call, its id set to the
 * request's. No MCP, no key, no work: what a Node server costs for the same bytes on a new connection.
 */
async function startBareNode(answer: Buffer): Promise<{ url: string; pid: number; stop(): void }> {
  const port = await freePort();
  const source = `
    const body = Buffer.from(process.env.ANSWER, 'base64').toString('utf8');
    require('node:http').createServer((req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const id = JSON.parse(Buffer.concat(chunks).toString()).id;
        const out = id === undefined ? '' : body.replace(/"id":[^,}]+/, '"id":' + JSON.stringify(id));
        res.writeHead(id === undefined ? 202 : 200, { 'content-type': 'application/json' });
        res.end(out);
      });
    }).listen(${port}, '127.0.0.1', () => console.log('listening'));`;
  const child = spawn(process.execPath, ['-e', source], {
    env: { ANSWER: answer.toString('base64') },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`bare Node server exited (${code})`)));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, pid: child.pid ?? 0, stop: () => child.kill('SIGTERM') };
}

/** CPU time a process has used, in ms (user and system, all its threads; 10 ms ticks). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

interface Figures {
  /** CPU ms the server spent, summed over the measured rounds. */
  cpu: number;
  /** ms to the first page (the whole answer for a single-answer server). */
  first: number[];
  /** ms to the last page. */
  all: number[];
  pages: number;
  /** Bytes of HTTP body, all pages. */
  bytes: number;
  firstBytes: number;
}

interface Side {
  label: string;
  pid: number;
  run(
    fresh: boolean,
  ): Promise<{ first: number; all: number; pages: number; bytes: number; firstBytes: number }>;
}

interface Case {
  name: string;
  fresh: boolean;
  sides: Side[];
  figures: Map<Side, Figures>;
}

type Answer = Awaited<ReturnType<McpClient['call']>>;

function resultOf(answer: Answer): Record<string, unknown> {
  const message = messageOf(answer);
  const result = message.result as Record<string, unknown> | undefined;
  if (answer.status !== 200 || result === undefined || result.isError === true) {
    throw new Error(`expand_rrule failed: ${answer.body.toString().slice(0, 300)}`);
  }
  return result;
}

/** Calgate: every page, one after the other; checks the instances the first time. */
function calgateSide(
  label: string,
  pid: number,
  client: () => McpClient,
  args: Record<string, unknown>,
  count: number,
): Side {
  let checked = false;
  return {
    label,
    pid,
    async run() {
      const c = client();
      const before = performance.now();
      let first = 0;
      let firstBytes = 0;
      let bytes = 0;
      let pages = 0;
      let instances = 0;
      let pageToken: string | undefined;
      do {
        const answer = await c.call('expand_rrule', {
          ...args,
          ...(pageToken === undefined ? {} : { pageToken }),
        });
        bytes += answer.body.length;
        pages += 1;
        if (pages === 1) {
          first = performance.now() - before;
          firstBytes = answer.body.length;
        }
        // The token is needed for the next page: reading it is part of the client's work.
        const structured = resultOf(answer).structuredContent as {
          instances: unknown[];
          nextPageToken?: string;
        };
        instances += structured.instances.length;
        pageToken = structured.nextPageToken;
      } while (pageToken !== undefined);
      const all = performance.now() - before;
      if (!checked && instances !== count) {
        throw new Error(`${label}: ${instances} instances in ${pages} pages, not ${count}`);
      }
      checked = true;
      return { first, all, pages, bytes, firstBytes };
    },
  };
}

/** Temporal Cortex: one answer holds every instance; checked the first time. */
function peerSide(
  label: string,
  pid: number,
  client: () => McpClient,
  args: Record<string, unknown>,
  count: number,
): Side {
  let checked = false;
  return {
    label,
    pid,
    async run() {
      const c = client();
      const before = performance.now();
      const answer = await c.call('expand_rrule', args);
      const elapsed = performance.now() - before;
      if (!checked) {
        const text = ((resultOf(answer).content as { text: string }[] | undefined) ?? [])
          .map((part) => part.text)
          .join('');
        const said = args.format === 'toon' ? `instances[${count}]` : `"count": ${count}`;
        if (!text.includes(said)) {
          throw new Error(`${label}: the answer does not hold ${count} instances: ${text.slice(0, 200)}`);
        }
        checked = true;
      }
      return {
        first: elapsed,
        all: elapsed,
        pages: 1,
        bytes: answer.body.length,
        firstBytes: answer.body.length,
      };
    },
  };
}

const median = (values: number[]) => percentile(values, 50);
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

const loadBefore = loadavg();
const stack = await startBenchStack({ nodeArgs });
const peer = await startTemporalCortex();
const lines: string[] = [];
const say = (line = '') => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};
const clients: McpClient[] = [];
let bare: Awaited<ReturnType<typeof startBareNode>> | undefined;
/** The rule in Calgate's words. */
const ours20 = () => ({ rrule: RULE.rrule, dtstart: RULE.dtstart, timeZone: RULE.zone });
try {
  const calgate2025: McpTarget = {
    url: `${stack.base}/api/mcp`,
    headers: { authorization: `Bearer ${stack.secret}` },
  };
  const calgate2026: McpTarget = { ...calgate2025, revision: '2026-07-28' };
  const cortex: McpTarget = { url: peer.url };
  const probe = new McpClient(calgate2025);
  await probe.initialize();
  const smallAnswer = await probe.call('expand_rrule', { ...ours20(), count: 20, format: 'json' });
  probe.close();
  bare = await startBareNode(smallAnswer.body);
  const floor: McpTarget = { url: bare.url };
  /** A client per server and case, kept alive, or opened again per call (same session). */
  const keep = async (target: McpTarget) => {
    const client = new McpClient(target);
    await client.initialize();
    clients.push(client);
    return client;
  };
  const fresh = async (target: McpTarget) => {
    const client = await keep(target);
    return () => {
      client.close();
      return client;
    };
  };
  const held = async (target: McpTarget) => {
    const client = await keep(target);
    return () => client;
  };
  // The same rule in each server's words: Calgate's `timeZone`, Temporal Cortex's `timezone`.
  const ours = ours20();
  const theirs = { rrule: RULE.rrule, dtstart: RULE.dtstart, timezone: RULE.zone };
  /** The servers: where each listens, how its answers are read (paged or whole), what it is asked. */
  const servers = {
    calgate2025: {
      label: 'Calgate (2025-11-25)',
      pid: stack.pid,
      target: calgate2025,
      side: calgateSide,
      args: ours,
    },
    calgate2026: {
      label: 'Calgate (2026-07-28)',
      pid: stack.pid,
      target: calgate2026,
      side: calgateSide,
      args: ours,
    },
    bare: {
      label: 'bare Node server, same bytes (floor)',
      pid: bare.pid,
      target: floor,
      side: calgateSide,
      args: ours,
    },
    cortex: {
      label: 'Temporal Cortex',
      pid: peer.pid,
      target: cortex,
      side: peerSide,
      args: theirs,
    },
  };
  type Server = keyof typeof servers;
  /** The cases, each asked of the servers it names in that order. */
  const table: { name: string; count: number; format: 'json' | 'toon'; fresh: boolean; on: Server[] }[] = [
    {
      name: '10,000 instances, JSON',
      count: 10_000,
      format: 'json',
      fresh: false,
      on: ['calgate2025', 'calgate2026', 'cortex'],
    },
    {
      name: '10,000 instances, TOON',
      count: 10_000,
      format: 'toon',
      fresh: false,
      on: ['calgate2025', 'cortex'],
    },
    {
      name: '20 instances, JSON, new connection per call',
      count: 20,
      format: 'json',
      fresh: true,
      on: ['calgate2025', 'cortex', 'bare'],
    },
  ];
  const cases: Case[] = [];
  for (const { name, count, format, fresh: perCall, on } of table) {
    const sides: Side[] = [];
    for (const server of on.map((key) => servers[key])) {
      const client = await (perCall ? fresh : held)(server.target);
      sides.push(server.side(server.label, server.pid, client, { ...server.args, count, format }, count));
    }
    cases.push({ name, fresh: perCall, sides, figures: new Map() });
  }
  for (const c of cases) {
    for (const side of c.sides) {
      c.figures.set(side, { cpu: 0, first: [], all: [], pages: 0, bytes: 0, firstBytes: 0 });
    }
  }
  for (let round = 0; round < WARMUP + CALLS; round++) {
    for (const c of cases) {
      // Interleaved call by call; who goes first alternates.
      const order = round % 2 === 0 ? c.sides : [...c.sides].reverse();
      for (const side of order) {
        const cpuBefore = cpuMs(side.pid);
        const run = await side.run(c.fresh);
        if (round >= WARMUP) {
          const figures = c.figures.get(side) as Figures;
          figures.cpu += cpuMs(side.pid) - cpuBefore;
          figures.first.push(run.first);
          figures.all.push(run.all);
          figures.pages = run.pages;
          figures.bytes = run.bytes;
          figures.firstBytes = run.firstBytes;
        }
      }
    }
  }
  const loadAfter = loadavg();
  say(`## ${today()} — ${machineSummary()}`);
  say();
  say(
    `expand_rrule (${RULE.rrule} from ${RULE.dtstart}, ${RULE.zone}) over MCP, Calgate against Temporal Cortex ${PEER_VERSION} (its linux-x64 binary in HTTP mode), ${CALLS} rounds after ${WARMUP} of warm-up, every case of every server once a round, interleaved call by call (order alternating). Calgate pages under 25,000 o200k tokens, fetched one after the other on one kept-alive connection; Temporal Cortex answers in one. Gateway node ${[...GATEWAY_NODE_FLAGS, ...nodeArgs].join(' ')}. Load average ${loadBefore.map((l) => l.toFixed(1)).join(' ')} before, ${loadAfter.map((l) => l.toFixed(1)).join(' ')} after.`,
  );
  say();
  say(
    '| case | server | first page p50 ms | all pages p50 ms | all pages p90 ms | server CPU ms, all pages | pages | first page bytes | all bytes |',
  );
  say('|---|---|---|---|---|---|---|---|---|');
  for (const c of cases) {
    for (const side of c.sides) {
      const f = c.figures.get(side) as Figures;
      say(
        `| ${c.name} | ${side.label} | ${median(f.first).toFixed(1)} | ${median(f.all).toFixed(1)} | ${percentile(f.all, 90).toFixed(1)} | ${(f.cpu / CALLS).toFixed(1)} | ${f.pages} | ${f.firstBytes} | ${f.bytes} |`,
      );
    }
  }
  if (process.env.BENCH_RECORD !== '0') {
    await mkdir(`${root}bench/results`, { recursive: true });
    await appendFile(`${root}bench/results/rrule-mcp.md`, `\n${lines.join('\n')}\n`);
  }
} finally {
  for (const client of clients) {
    client.close();
  }
  bare?.stop();
  await peer.stop();
  await stack.stop();
}
