// The `switchboard` command as a user runs it (bin/switchboard.js in a child process) against a daemon started in this
// process with the fake Claude CLI as its agent: follow a launch, send, list as JSON; exit codes for bad input (2)
// and for a daemon that is not running (1, saying how to start it).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { cliDaemon, switchboard } from '../support/cli.ts';

describe('switchboard CLI', () => {
  const rig = cliDaemon('sb-cli-');
  const { dir, workdir, env } = rig;

  it('launch --follow streams what the agent says until it waits, then send, output and sessions --json', async () => {
    const launched = await switchboard(
      [
        'launch',
        'add',
        'a',
        'test',
        'for',
        'parse()',
        '[[tool]]',
        '--workdir',
        workdir,
        '--harness',
        'claude',
        '--follow',
      ],
      env,
    );
    assert.equal(launched.code, 0, launched.stderr);
    assert.match(launched.stdout, /Launched \(claude\)/);
    assert.match(launched.stdout, /🔧 Bash — echo hello-from-tool/);
    assert.match(launched.stdout, /tool said: hello-from-tool/);
    assert.match(launched.stdout, /waiting for input/);
    const name = /Name: (\S+)/.exec(launched.stdout)?.[1];
    assert.equal(name, 'add-test-parse');

    const sent = await switchboard(['send', 'add-test-parse', 'also', 'cover', 'empty', 'input'], env);
    assert.equal(sent.code, 0, sent.stderr);
    assert.match(sent.stdout, /Responded:\nalso cover empty input/);

    const followed = await switchboard(['output', 'add-test-parse', '--follow'], env);
    assert.equal(followed.code, 0, followed.stderr);

    const listed = await switchboard(['sessions', '--json'], env);
    assert.equal(listed.code, 0, listed.stderr);
    const json = JSON.parse(listed.stdout) as { sessions: { name: string; status: string }[] };
    assert.equal(json.sessions[0]?.name, 'add-test-parse');

    const output = await switchboard(['output', 'add-test-parse', '--json'], env);
    const lines = (JSON.parse(output.stdout) as { lines: string[] }).lines;
    assert.ok(
      lines.some((l) => l.includes('also cover empty input')),
      'the second turn answered',
    );

    const killed = await switchboard(['kill', 'add-test-parse'], env);
    assert.equal(killed.code, 0, killed.stderr);
    const again = await switchboard(['kill', 'add-test-parse'], env);
    assert.equal(again.code, 2, 'killing a finished session is bad input');
    assert.match(again.stderr, /already killed/);
  });

  it('exits 2 naming the problem on bad input, before touching the daemon', async () => {
    const noDaemon = { SWITCHBOARD_HOME: join(dir, 'nowhere'), SWITCHBOARD_URL: 'http://127.0.0.1:9' };
    const missing = await switchboard(['output'], noDaemon);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /missing required argument 'session'/);
    const unknownOption = await switchboard(['sessions', '--bogus'], noDaemon);
    assert.equal(unknownOption.code, 2);
    const badValue = await switchboard(['sessions', '--status', 'sleeping'], noDaemon);
    assert.equal(badValue.code, 2);
    assert.match(badValue.stderr, /status: /);
    const badNumber = await switchboard(['output', 'x', '--lines', 'many'], noDaemon);
    assert.equal(badNumber.code, 2);
    assert.match(badNumber.stderr, /lines: /);
    const unknown = await switchboard(['output', 'no-such-session'], env);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /no session "no-such-session"/);
  });

  it('an invalid --url is bad input (exit 2), not a daemon that is not running', async () => {
    const result = await switchboard(['sessions', '--url', 'localhost:18789'], {
      SWITCHBOARD_HOME: join(dir, 'nowhere'),
    });
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /--url "localhost:18789"/);
    assert.doesNotMatch(result.stderr, /not running/);
  });

  /** Launches `name` with `args` typed in `cwd` (made first); answers the workdir it got, after killing it. */
  async function launchedWorkdir(name: string, args: string[], cwd: string): Promise<string> {
    mkdirSync(cwd, { recursive: true });
    const launched = await switchboard(['launch', ...args, '--name', name, '--json'], env, cwd);
    assert.equal(launched.code, 0, launched.stderr);
    await switchboard(['kill', name], env);
    return (JSON.parse(launched.stdout) as { workdir: string }).workdir;
  }

  it('a relative --workdir is relative to where the command was typed', async () => {
    mkdirSync(join(workdir, 'nested'), { recursive: true });
    assert.equal(
      await launchedWorkdir('rel-wd', ['relative', 'workdir', '--workdir', 'nested'], workdir),
      join(workdir, 'nested'),
    );
  });

  it('a launch without --workdir runs where the command was typed (the daemon is on this machine)', async () => {
    const here = join(workdir, 'here');
    assert.equal(await launchedWorkdir('here-wd', ['right', 'here'], here), here);
  });

  it('a launch that resumes a session without --workdir runs in that session’s workdir, wherever it was typed', async () => {
    const first = join(workdir, 'first');
    mkdirSync(first, { recursive: true });
    // Followed until its first turn ends, so the agent has reported the session id a resume needs.
    const launched = await switchboard(['launch', 'start', 'it', '--name', 'resumable', '--follow'], env, first);
    assert.equal(launched.code, 0, launched.stderr);
    await switchboard(['kill', 'resumable'], env);
    const resumed = await launchedWorkdir(
      'resumed',
      ['go', 'on', '--resume-session-id', 'resumable'],
      join(workdir, 'elsewhere'),
    );
    assert.equal(resumed, first);
  });

  it('start on a port a switchboard daemon holds says so and names gateway.port and --port', async () => {
    const result = await switchboard(['start', '--port', String(rig.daemon.port)], {
      SWITCHBOARD_HOME: join(dir, 'second-home'),
    });
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, new RegExp(`port ${rig.daemon.port} on 127\\.0\\.0\\.1`));
    assert.match(result.stderr, /another switchboard daemon/);
    assert.match(result.stderr, /gateway\.port/);
    assert.match(result.stderr, /--port <n>/);
  });

  it('start refuses an invalid gateway.host before anything starts, naming the key', async () => {
    const elsewhere = join(dir, 'bad-host-home');
    const result = await switchboard(['start', '--port', '0', '--host', 'localhost:8080'], {
      SWITCHBOARD_HOME: elsewhere,
    });
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /gateway\.host "localhost:8080"/);
    assert.match(result.stderr, /without a port/);
    assert.ok(!existsSync(join(elsewhere, 'state.db')), 'nothing started: no store was created');
  });

  it('exits 1 and says how to start the daemon when it is not running', async () => {
    const result = await switchboard(['sessions'], {
      SWITCHBOARD_HOME: join(dir, 'nowhere'),
      SWITCHBOARD_URL: 'http://127.0.0.1:9',
    });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /daemon is not running/);
    assert.match(result.stderr, /npm start/);
  });
});
