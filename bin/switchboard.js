#!/usr/bin/env node
// Entry point of the `switchboard` command: checks the Node version, then runs the TypeScript CLI directly.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 13)) {
  process.stderr.write(
    `switchboard needs Node.js >= 22.13 (this is ${process.version}). Run it through npm (npx switchboard …), which uses the Node 24 pinned in package.json.\n`,
  );
  process.exit(1);
}
const { runCli } = await import('../src/cli/main.ts');
const result = await runCli(process.argv.slice(2), {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  env: process.env,
});
if (!result.keepAlive) process.exitCode = result.exitCode;
