// `--follow` through a slow model: a turn that stays silent past the safety net (timings.safetyNetMs, 300 ms here) is
// `stalled`, which is not a wait for input, so `launch --follow` and `output --follow` keep following until the turn
// really ends. The `switchboard` command runs as a user runs it (bin/switchboard.js) against a daemon in this process
// with the fake Claude CLI as its agent.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cliDaemon, switchboard } from '../support/cli.ts';

describe('switchboard --follow through a stalled turn', () => {
  const rig = cliDaemon('sb-follow-', { 'timings.safetyNetMs': 300 });
  const { workdir, env } = rig;

  it('launch --follow keeps following past "stalled" to the turn end, saying the agent is silent, not waiting', async () => {
    const launched = await switchboard(
      [
        'launch',
        'think',
        'long',
        '[[sleep:1500]]',
        '--name',
        'thinker',
        '--workdir',
        workdir,
        '--harness',
        'claude',
        '--follow',
      ],
      env,
    );
    assert.equal(launched.code, 0, launched.stderr);
    assert.match(
      launched.stdout,
      /⏳ thinker has been silent for a while \(no output, no tool running\); still following/,
    );
    assert.match(launched.stdout, /FAKE CLAUDE REPLY to: think long/, 'the reply after the stall is shown');
    assert.match(launched.stdout, /💬 thinker is waiting for input \(turn-end\)/, 'it stops at the real wait');
    assert.doesNotMatch(
      launched.stdout.split('FAKE CLAUDE REPLY')[0] ?? '',
      /waiting for input/,
      'the stall is not called a wait for input',
    );
  });

  it('output --follow on a stalled session follows it to the turn end', { timeout: 30_000 }, async () => {
    const sessions = rig.daemon.services.sessions;
    const { promise: stalled, resolve: stall } = Promise.withResolvers<void>();
    const unsubscribe = sessions.on((signal) => {
      if (signal.type === 'waiting' && signal.reason === 'stalled' && signal.session.name === 'ponder') stall();
    });
    await switchboard(
      ['launch', 'ponder', '[[sleep:2500]]', '--name', 'ponder', '--workdir', workdir, '--harness', 'claude'],
      env,
    );
    await stalled;
    unsubscribe();
    assert.equal((await sessions.live('ponder'))?.waitingFor, 'stalled', 'the session stalls');
    const followed = await switchboard(['output', 'ponder', '--follow'], env);
    assert.equal(followed.code, 0, followed.stderr);
    assert.match(followed.stdout, /FAKE CLAUDE REPLY to: ponder/);
    assert.match(followed.stdout, /💬 ponder is waiting for input \(turn-end\)/);
  });
  it(
    'output --follow on a session that already waits for input says what it waits on, and stops',
    { timeout: 30_000 },
    async () => {
      const sessions = rig.daemon.services.sessions;
      const { promise: waiting, resolve: waited } = Promise.withResolvers<void>();
      const unsubscribe = sessions.on((signal) => {
        if (signal.type === 'waiting' && signal.reason === 'turn-end' && signal.session.name === 'quick') waited();
      });
      await switchboard(['launch', 'hello', '--name', 'quick', '--workdir', workdir, '--harness', 'claude'], env);
      await waiting;
      unsubscribe();
      const followed = await switchboard(['output', 'quick', '--follow'], env);
      assert.equal(followed.code, 0, followed.stderr);
      assert.match(followed.stdout, /FAKE CLAUDE REPLY to: hello/);
      assert.match(followed.stdout, /💬 quick is waiting for input \(turn-end\)/);
    },
  );
});
