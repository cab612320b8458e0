// The orphan guard process. The daemon starts one (src/coding/orphan-guard.ts) and writes `+<pid>` to its stdin when it
// starts an agent (each agent leads its own process group) and `-<pid>` when that agent exits. When the daemon dies by
// any means, SIGKILL included, this process's stdin reaches end-of-file: it sends SIGTERM to every agent group still
// listed (the agent and the tools it runs), SIGKILL to those left after the grace period (argv[2], ms), and exits.
// Terminal signals (SIGINT, SIGHUP) are ignored: the daemon stops its agents itself. SIGTERM ends it the same way EOF does.
// Plain JavaScript, so it starts under any Node the daemon runs on, whatever flags the daemon was started with.
import { createInterface } from 'node:readline';

const graceMs = Number(process.argv[2] ?? 2_000);
const POLL_MS = 50;
/** @type {Set<number>} */
const groups = new Set();
let ending = false;

/**
 * Sends `sig` to the process group `pgid`; false when no process of it is left.
 * @param {number} pgid
 * @param {NodeJS.Signals | 0} sig
 * @returns {boolean}
 */
function signalGroup(pgid, sig) {
  try {
    process.kill(-pgid, sig);
    return true;
  } catch {
    return false;
  }
}

/** Stops every group still listed (SIGTERM, SIGKILL after the grace) and exits. */
async function end() {
  if (ending) return;
  ending = true;
  let alive = [...groups].filter((pgid) => signalGroup(pgid, 'SIGTERM'));
  const deadline = Date.now() + graceMs;
  while (alive.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    alive = alive.filter((pgid) => signalGroup(pgid, 0));
  }
  for (const pgid of alive) signalGroup(pgid, 'SIGKILL');
  process.exit(0);
}

process.on('SIGINT', () => {});
process.on('SIGHUP', () => {});
process.on('SIGTERM', () => void end());
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on('line', (line) => {
  const match = /^([+-])(\d+)$/.exec(line.trim());
  if (!match) return;
  const pid = Number(match[2]);
  if (match[1] === '+') groups.add(pid);
  else groups.delete(pid);
});
lines.on('close', () => void end());
