// Fault injection for crash tests: a named step at which the process kills itself, so a test can crash the daemon
// exactly inside a window (between "effect done" and "marked done") instead of by chance. Off unless the environment
// variable SWITCHBOARD_FAULT names the step; then the process SIGKILLs itself when it reaches that step.
//
// SWITCHBOARD_FAULT="<step>" kills at the first time the step is reached; "<step>@<n>" at the n-th time (1-based).
// Several steps may be listed, comma-separated. Steps are plain strings named where they are placed
// (`outbox.after-send`, `linear.worker.after-effect`, …); docs/architecture.md lists them.

const ENV = 'SWITCHBOARD_FAULT';

interface Armed {
  step: string;
  at: number;
  seen: number;
}

function parse(value: string | undefined): Armed[] {
  if (!value) return [];
  return value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
    .map((part) => {
      const [step, at] = part.split('@');
      const n = at === undefined ? 1 : Number(at);
      return { step: step ?? part, at: Number.isInteger(n) && n >= 1 ? n : 1, seen: 0 };
    });
}

const armed: Armed[] = parse(process.env[ENV]);

/**
 * Marks a named step. When SWITCHBOARD_FAULT arms this step (and this is its n-th arrival), the process is killed
 * with SIGKILL on the spot: no finally blocks, no flushes, exactly as a power cut or `kill -9` would. Otherwise a no-op.
 */
export function faultPoint(step: string): void {
  if (armed.length === 0) return;
  for (const entry of armed) {
    if (entry.step !== step) continue;
    entry.seen += 1;
    if (entry.seen === entry.at) {
      process.stderr.write(`fault injected at ${step}\n`);
      process.kill(process.pid, 'SIGKILL');
    }
  }
}

/** The environment variable a test sets (to `step` or `step@n`) to arm a fault point in a child daemon. */
export const FAULT_ENV = ENV;
