// Runs bin/switchboard.js again under the Node 24 pinned in package.json (node_modules/node/bin/node), for a Node
// too old to run switchboard itself. Plain JavaScript that any Node since 14 can load.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The pinned Node this checkout installs. */
export const PINNED_NODE = fileURLToPath(new URL('../node_modules/node/bin/node', import.meta.url));
const ENTRY = fileURLToPath(new URL('./switchboard.js', import.meta.url));

/**
 * Starts the pinned Node on this entry point with the same arguments and terminal, passes SIGTERM and SIGHUP on
 * (Ctrl-C reaches it directly), and ends with its exit code or signal.
 */
export function handOver(args) {
  if (!existsSync(PINNED_NODE)) {
    process.stderr.write(
      `switchboard needs Node.js >= 22.13 (this is ${process.version}) and the pinned Node 24 is not installed. Run \`npm start\` (or \`npm ci\`) in the switchboard folder first, then use \`npx switchboard …\`.\n`,
    );
    process.exit(1);
  }
  const child = spawn(PINNED_NODE, [ENTRY, ...args], { stdio: 'inherit' });
  const forward = (signal) => child.kill(signal);
  // Ctrl-C goes to the whole foreground group: the child gets it already, passing it on would make it a second one.
  process.on('SIGINT', () => undefined);
  process.on('SIGTERM', forward);
  process.on('SIGHUP', forward);
  child.on('error', (error) => {
    process.stderr.write(`switchboard: could not start ${PINNED_NODE}: ${error.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else process.exit(code === null ? 1 : code);
  });
}
