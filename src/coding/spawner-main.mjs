// The agent spawner process. The daemon starts one (src/coding/spawner.ts) so that forking an agent does not fork the
// daemon's large memory on its event loop. Protocol:
// * argv[2] is the path of a Unix socket (in a directory only the daemon's user can enter) this process listens on;
//   once it listens it sends {t:'ready'} over the IPC channel.
// * the daemon sends {t:'spawn', id, token, command, args, cwd, env, stdin: 'pipe'|'ignore'} over IPC and connects one
//   socket per piped stdio stream, each starting with the line `<token> <fd>\n` (fd 0, 1 or 2). Nothing else is
//   written to them until the daemon hears {t:'spawned'}.
// * with the message and every socket in hand, the agent is spawned detached (it leads its own process group) with
//   those sockets as its stdio; this process then closes its copies, so the agent's output goes straight to the
//   daemon, and answers {t:'spawned', id, pid} or {t:'error', id, message} (the message Node gives in the daemon too:
//   `spawn <command> ENOENT`), and later {t:'exit', id, code, signal}.
// * {t:'kill', id, signal} signals the agent itself (the daemon signals its process group directly).
// When the IPC channel closes (the daemon died or let it go) it removes the socket's directory and exits; its agents
// live on, watched by the orphan guard.
// Plain JavaScript, so it starts under any Node the daemon runs on, whatever flags the daemon was started with.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname } from 'node:path';

const socketPath = process.argv[2];
/** Launches asked for and not spawned yet, by token: the message (once here) and the sockets that arrived. */
const pending = new Map();
/** Spawned agents still running, by id. */
const running = new Map();

/**
 * Sends a message to the daemon; a daemon that is gone is noticed through 'disconnect'.
 * @param {Record<string, unknown>} message
 */
function tell(message) {
  if (process.connected) process.send(message);
}

/** @param {string} token */
function entry(token) {
  let found = pending.get(token);
  if (!found) {
    found = { message: null, sockets: new Map() };
    pending.set(token, found);
  }
  return found;
}

/** Spawns the launch named by `token` once its message and every socket it needs have arrived. */
function maybeSpawn(token) {
  const launch = pending.get(token);
  if (!launch?.message) return;
  const { message, sockets } = launch;
  const wanted = message.stdin === 'pipe' ? [0, 1, 2] : [1, 2];
  if (!wanted.every((fd) => sockets.has(fd))) return;
  pending.delete(token);
  const stdio = [message.stdin === 'pipe' ? sockets.get(0) : 'ignore', sockets.get(1), sockets.get(2)];
  let child;
  try {
    child = spawn(message.command, message.args, { cwd: message.cwd, env: message.env, stdio, detached: true });
  } catch (error) {
    for (const socket of sockets.values()) socket.destroy();
    tell({ t: 'error', id: message.id, message: error instanceof Error ? error.message : String(error) });
    return;
  }
  // The agent holds its own copies now; ours would keep its stdin readable here and its output from ending.
  for (const socket of sockets.values()) socket.destroy();
  let failed = false;
  child.once('error', (error) => {
    if (child.pid !== undefined) return;
    failed = true;
    tell({ t: 'error', id: message.id, message: error.message });
  });
  if (child.pid === undefined) return;
  running.set(message.id, child);
  tell({ t: 'spawned', id: message.id, pid: child.pid });
  child.once('exit', (code, signal) => {
    running.delete(message.id);
    if (!failed) tell({ t: 'exit', id: message.id, code, signal });
  });
}

const server = createServer({ pauseOnConnect: false }, (socket) => {
  let header = '';
  socket.on('error', () => socket.destroy());
  const onData = (chunk) => {
    header += chunk;
    const end = header.indexOf('\n');
    if (end < 0) {
      if (header.length > 200) socket.destroy();
      return;
    }
    socket.off('data', onData);
    socket.pause();
    const match = /^([0-9a-f-]{36}) ([012])$/.exec(header.slice(0, end));
    // Only a launch the daemon announced (its token is random) may have sockets: anything else is dropped.
    if (!match || end !== header.length - 1) {
      socket.destroy();
      return;
    }
    const token = match[1];
    entry(token).sockets.set(Number(match[2]), socket);
    maybeSpawn(token);
  };
  socket.setEncoding('utf8');
  socket.on('data', onData);
});

process.on('message', (message) => {
  if (message.t === 'spawn') {
    entry(message.token).message = message;
    maybeSpawn(message.token);
  } else if (message.t === 'kill') {
    running.get(message.id)?.kill(message.signal);
  } else if (message.t === 'forget') {
    const launch = pending.get(message.token);
    pending.delete(message.token);
    for (const socket of launch?.sockets.values() ?? []) socket.destroy();
  }
});
process.on('disconnect', () => {
  // The daemon made the directory for this socket alone.
  rmSync(dirname(socketPath), { recursive: true, force: true });
  process.exit(0);
});
// Terminal signals reach the daemon, which stops its agents itself; this process ends with the IPC channel.
process.on('SIGINT', () => {});
process.on('SIGHUP', () => {});
server.listen(socketPath, () => tell({ t: 'ready' }));
