import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

/** Clock ticks per second of the utime/stime fields of /proc/<pid>/stat. */
export const CLOCK_TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** The command name and the user plus system CPU time of a process, all threads included, in clock ticks. */
function readStat(pid: number | string): { comm: string; ticks: number } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name may hold spaces and parentheses; the fields after its closing parenthesis start at field 3.
  const close = stat.lastIndexOf(')');
  const fields = stat.slice(close + 2).split(' ');
  return { comm: stat.slice(stat.indexOf('(') + 1, close), ticks: Number(fields[11]) + Number(fields[12]) };
}

/** CPU time (user + system, all threads) a process has used so far, in microseconds. */
export function cpuMicros(pid: number): number {
  const stat = readStat(pid);
  if (!stat) {
    throw new Error(`process ${pid} is gone`);
  }
  return (stat.ticks * 1e6) / CLOCK_TICKS_PER_SECOND;
}

/**
 * CPU time used so far by every process named `postgres` (the PostgreSQL server's backends and helpers), in
 * microseconds. Backends that exit between two readings are lost; the pools keep theirs open, so few do.
 */
export function postgresCpuMicros(): number {
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (/^\d+$/.test(entry)) {
      const stat = readStat(entry);
      if (stat?.comm === 'postgres') {
        ticks += stat.ticks;
      }
    }
  }
  return (ticks * 1e6) / CLOCK_TICKS_PER_SECOND;
}

function statusField(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  return match ? Number(match[1]) * 1024 : 0;
}

/** The peak resident set size of a process (since it started, or since `resetPeakRss`), in bytes. */
export function peakRssBytes(pid: number): number {
  return statusField(pid, 'VmHWM');
}

/** The current resident set size of a process, in bytes. */
export function rssBytes(pid: number): number {
  return statusField(pid, 'VmRSS');
}

/** Resets a process's peak RSS to its current RSS (Linux ≥ 4.0); false when the kernel refuses. */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}
