// CPU time of this process and of its reaped children over a stretch of a bench, so a launch bench can show where a
// burst's CPU went (the agents starting, or the daemon). Children's time is read from /proc/self/stat (Linux only).
import { readFileSync } from 'node:fs';

/** CPU milliseconds used by this process (user, system) and by its children that exited (null without /proc). */
export interface CpuSplit {
  userMs: number;
  systemMs: number;
  childrenMs: number | null;
}

/** Clock ticks per second of /proc's times (USER_HZ; 100 on every Linux build that matters). */
const TICKS_PER_SECOND = 100;

function childrenMs(): number | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command name (which may hold spaces) start at the state; cutime and cstime are fields 16 and 17.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** Starts measuring; the returned function gives the CPU used since (process, and children reaped meanwhile). */
export function measureCpu(): () => CpuSplit {
  const process0 = process.cpuUsage();
  const children0 = childrenMs();
  return () => {
    const used = process.cpuUsage(process0);
    const children1 = childrenMs();
    return {
      userMs: used.user / 1000,
      systemMs: used.system / 1000,
      childrenMs: children0 === null || children1 === null ? null : children1 - children0,
    };
  };
}

/** "X ms children + Y ms this process" for a line of the report. */
export function formatCpu(split: CpuSplit): string {
  const children = split.childrenMs === null ? 'n/a' : `${split.childrenMs.toFixed(0)} ms`;
  return `${children} in the agents + ${(split.userMs + split.systemMs).toFixed(0)} ms in this process`;
}
