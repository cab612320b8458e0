#!/usr/bin/env node
// Entry point of the `switchboard` command. switchboard runs on Node >= 22.13: through npm (npx switchboard, npm start)
// that is the Node 24 pinned in package.json, which npm puts first on PATH. Started by an older Node (a system Node 20
// running this file directly), it hands over to that pinned Node when it is installed, else says how to get it.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 13)) {
  const { handOver } = await import('./hand-over.js');
  handOver(process.argv.slice(2));
} else {
  const { runMain } = await import('../src/cli/main.ts');
  await runMain();
}
