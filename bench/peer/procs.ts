/** CPU and memory of the processes under test, read from /proc (Linux). */
import { readdir, readFile } from 'node:fs/promises';

const TICKS_PER_SECOND = 100;

async function statFields(pid: number): Promise<string[] | undefined> {
  try {
    // The command name (field 2) may hold spaces; the fields after it are what we read.
    return (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]?.split(' ');
  } catch {
    return undefined;
  }
}

/** CPU seconds (user + system) the process has used so far. */
export async function cpuSecondsOf(pid: number): Promise<number> {
  const fields = await statFields(pid);
  return fields === undefined ? 0 : (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** Resident set size now, in bytes. */
export async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
}

/** The process's command name (`postgres`, `redis-server`, `node`), or undefined once it has gone. */
export async function commandOf(pid: number): Promise<string | undefined> {
  try {
    return (await readFile(`/proc/${pid}/comm`, 'utf8')).trim();
  } catch {
    return undefined;
  }
}

/** Every process below `root` (children, grandchildren, …), e.g. PostgreSQL's backends. */
export async function descendantsOf(root: number): Promise<number[]> {
  const parents = new Map<number, number>();
  for (const name of await readdir('/proc')) {
    const pid = Number(name);
    if (Number.isInteger(pid)) {
      const fields = await statFields(pid);
      if (fields !== undefined) {
        parents.set(pid, Number(fields[1]));
      }
    }
  }
  const below = new Set<number>([root]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, parent] of parents) {
      if (!below.has(pid) && below.has(parent)) {
        below.add(pid);
        grew = true;
      }
    }
  }
  below.delete(root);
  return [...below];
}

/** CPU seconds each of a set of processes has used so far (read again by cpuSecondsSince). */
export async function cpuSnapshot(pids: readonly number[]): Promise<Map<number, number>> {
  return new Map(await Promise.all(pids.map(async (pid) => [pid, await cpuSecondsOf(pid)] as const)));
}

/**
 * CPU seconds the processes of a snapshot have used since it was taken. A process that has ended
 * meanwhile (a PostgreSQL backend whose idle connection was closed) adds nothing: subtracting the
 * CPU of its whole life from a total that no longer holds it would understate the rest.
 */
export async function cpuSecondsSince(snapshot: ReadonlyMap<number, number>): Promise<number> {
  let total = 0;
  for (const [pid, before] of snapshot) {
    const fields = await statFields(pid);
    if (fields !== undefined) {
      total += Math.max(0, (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND - before);
    }
  }
  return total;
}

/** Samples a process's RSS every 100 ms until stopped; returns the peak. */
export function rssPeak(pid: number): { stop(): Promise<number> } {
  let peak = 0;
  const timer = setInterval(() => {
    rssOf(pid).then(
      (rss) => {
        peak = Math.max(peak, rss);
      },
      () => {},
    );
  }, 100);
  return {
    async stop() {
      clearInterval(timer);
      return Math.max(peak, await rssOf(pid).catch(() => 0));
    },
  };
}

/**
 * Waits until every process below `root` together uses less than `share` of a core over a
 * second (at most `maxSeconds`), so that one server's leftover work — the peer finishing its
 * last calls, a large heap being collected — does not run into the next server's measurement.
 * Returns the seconds waited.
 */
export async function quiet(root: number, share = 0.05, maxSeconds = 30): Promise<number> {
  const started = performance.now();
  for (;;) {
    const before = await cpuSnapshot(await descendantsOf(root));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const waited = (performance.now() - started) / 1000;
    if ((await cpuSecondsSince(before)) < share || waited >= maxSeconds) {
      return waited;
    }
  }
}
