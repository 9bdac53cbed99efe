import { cpus, totalmem } from 'node:os';

/** The facts that make two benchmark runs comparable. */
export function machineSummary(): string {
  const cpu = cpus();
  return `${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${process.platform}/${process.arch}`;
}

export function today(): string {
  return new Date().toISOString().slice(0, 10);
}
