// `--follow` through a slow model: a turn that stays silent past the safety net (timings.safetyNetMs, 300 ms here) is
// `stalled`, which is not a wait for input, so `launch --follow` and `output --follow` keep following until the turn
// really ends. The `switchboard` command runs as a user runs it (bin/switchboard.js) against a daemon in this process
// with the fake Claude CLI as its agent.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startDaemon } from '../../src/main.ts';
import type { Daemon } from '../../src/main.ts';
import { tempDir } from '../support/temp-dir.ts';

const BIN = fileURLToPath(new URL('../../bin/switchboard.js', import.meta.url));
const FAKE_CLAUDE = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: NodeJS.ProcessEnv): Promise<Result> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

describe('switchboard --follow through a stalled turn', () => {
  const dir = tempDir('sb-follow-');
  const home = join(dir.path, 'home');
  const workdir = join(dir.path, 'work');
  let daemon: Daemon;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    mkdirSync(workdir, { recursive: true });
    daemon = await startDaemon({
      home,
      env: {},
      overrides: {
        'gateway.port': 0,
        workspaces: [dir.path],
        'log.level': 'silent',
        'harnesses.claude.executable': FAKE_CLAUDE,
        'timings.safetyNetMs': 300,
      },
    });
    env = { SWITCHBOARD_HOME: home };
  });

  after(async () => {
    await daemon.stop();
    dir.remove();
  });

  it('launch --follow keeps following past "stalled" to the turn end, saying the agent is silent, not waiting', async () => {
    const launched = await cli(['launch', 'think', 'long', '[[sleep:1500]]', '--name', 'thinker', '--workdir', workdir, '--harness', 'claude', '--follow'], env);
    assert.equal(launched.code, 0, launched.stderr);
    assert.match(launched.stdout, /⏳ thinker has been silent for a while \(no output, no tool running\); still following/);
    assert.match(launched.stdout, /FAKE CLAUDE REPLY to: think long/, 'the reply after the stall is shown');
    assert.match(launched.stdout, /💬 thinker is waiting for input \(turn-end\)/, 'it stops at the real wait');
    assert.doesNotMatch(launched.stdout.split('FAKE CLAUDE REPLY')[0] ?? '', /waiting for input/, 'the stall is not called a wait for input');
  });

  it('output --follow on a stalled session follows it to the turn end', async () => {
    await cli(['launch', 'ponder', '[[sleep:2500]]', '--name', 'ponder', '--workdir', workdir, '--harness', 'claude'], env);
    const deadline = Date.now() + 10_000;
    while (daemon.services.sessions.live('ponder')?.waitingFor !== 'stalled') {
      assert.ok(Date.now() < deadline, 'the session stalls');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const followed = await cli(['output', 'ponder', '--follow'], env);
    assert.equal(followed.code, 0, followed.stderr);
    assert.match(followed.stdout, /FAKE CLAUDE REPLY to: ponder/);
    assert.match(followed.stdout, /💬 ponder is waiting for input \(turn-end\)/);
  });
});
