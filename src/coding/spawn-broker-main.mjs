// The spawn broker: a small Node process the daemon starts once, which spawns agent processes for it. Spawning is
// synchronous in Node and costs in proportion to the spawning process's memory (fork copies its page tables), so a
// daemon of a few hundred MB would stall its event loop for every launch; this process is small and has nothing else
// to do. It relays each child's stdio and exit over its IPC channel (see spawn-broker.ts for the daemon's side).
// Plain JavaScript: it runs under any Node the daemon runs under, with no type stripping.
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';

/** The niceness agent processes run at (argv[2], default 10): below the daemon, so a burst of them never starves it. */
const AGENT_NICE = Number(process.argv[2] ?? 10);

/** @type {Map<number, import('node:child_process').ChildProcess>} */
const children = new Map();

/** @param {Record<string, unknown>} message */
function send(message) {
  if (process.connected) process.send(message);
}

process.on('message', (/** @type {any} */ m) => {
  if (m.op === 'spawn') {
    let child;
    try {
      child = spawn(m.command, m.args, { cwd: m.cwd, env: m.env, stdio: [m.stdin, 'pipe', 'pipe'] });
    } catch (error) {
      send({ op: 'error', id: m.id, message: error instanceof Error ? error.message : String(error) });
      send({ op: 'close', id: m.id, code: null, signal: null });
      return;
    }
    children.set(m.id, child);
    if (child.pid !== undefined && AGENT_NICE !== 0) {
      try {
        setPriority(child.pid, AGENT_NICE);
      } catch (error) {
        // It may have exited already; anything else is worth hearing about.
        if (error?.code !== 'ESRCH') process.stderr.write(`spawn broker: could not lower the priority of ${m.command} (pid ${child.pid}): ${error.message}\n`);
      }
    }
    child.once('spawn', () => send({ op: 'spawned', id: m.id, pid: child.pid }));
    child.once('error', (error) => send({ op: 'error', id: m.id, message: error.message }));
    child.stdout.on('data', (data) => send({ op: 'out', id: m.id, data }));
    child.stderr.on('data', (data) => send({ op: 'err', id: m.id, data }));
    // Writes after the child died fail with EPIPE; its exit is reported through `close`.
    child.stdin?.on('error', () => {});
    child.once('close', (code, signal) => {
      children.delete(m.id);
      send({ op: 'close', id: m.id, code, signal });
    });
  } else if (m.op === 'in') {
    children.get(m.id)?.stdin?.write(m.data);
  } else if (m.op === 'in-end') {
    children.get(m.id)?.stdin?.end();
  } else if (m.op === 'kill') {
    children.get(m.id)?.kill(m.signal);
  }
});

// The daemon is gone: so is the reason to stay. Children keep running (a restarted daemon stops its orphans).
process.on('disconnect', () => process.exit(0));
