// What every per-turn harness (one CLI process per turn through PerTurnRun: Codex, Gemini) does over its fake agent
// whatever the agent, written once: fake-codex.test.ts and fake-gemini.test.ts each register these cases for their harness.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Harness, RunSpec } from '../../src/coding/harness.ts';
import { collect, endRun, ofType } from './harness-run.ts';

/** The fake agent of one per-turn harness, as the shared cases drive it. */
export interface PerTurnFake {
  /** The fake agent's path. */
  fake: string;
  /** What the fake prints for --version. */
  version: string;
  /** A fresh harness over the fake, with `env` added to its config env. */
  harness(env?: Record<string, string>): Harness;
  /** A harness whose executable does not exist; its path ends in `nope`. */
  missingHarness(): Harness;
  /** The run spec of a prompt. */
  spec(prompt: string): RunSpec;
  /** The exit code of the fake on SIGTERM, as of the real CLI: null when it dies by the signal (Codex), 0 for Gemini. */
  sigtermExitCode: number | null;
}

/**
 * Registers the shared cases: [[garbage]], [[crash]], [[hang]] with kill() (SIGTERM obeyed or ignored), end() after a turn,
 * check() on the fake and on a missing executable.
 */
export function perTurnFakeCases(agent: PerTurnFake): void {
  const start = (prompt: string, env?: Record<string, string>) => agent.harness(env).start(agent.spec(prompt));

  test('[[garbage]]: malformed warnings, and the turn still succeeds', async () => {
    const run = start('hi [[garbage]]');
    const c = collect(run);
    const end = await c.waitFor((e) => e.type === 'turnEnd');
    assert.deepEqual((end as { outcome: unknown }).outcome, { ok: true });
    assert.equal(ofType(c.events, 'warning').filter((w) => w.malformed).length, 4);
    run.end();
    await c.done;
  });

  test('[[crash]]: no turnEnd, exited with the code and the stderr tail; the text so far is kept', async () => {
    const c = collect(start('[[crash]]'));
    await c.done;
    assert.equal(ofType(c.events, 'turnEnd').length, 0);
    assert.deepEqual(ofType(c.events, 'text'), [{ type: 'text', text: 'Working on it…' }]);
    const exited = c.events.at(-1) as { type: string; code: number; error: string };
    assert.equal(exited.type, 'exited');
    assert.equal(exited.code, 3);
    assert.match(exited.error, /exited with code 3 before the turn finished: .*flux capacitor/);
  });

  test('[[hang]] + kill(): exited "killed" promptly (the fake ends on SIGTERM like the real CLI)', async () => {
    const run = start('[[hang]]');
    const c = collect(run);
    await c.waitFor((e) => e.type === 'started');
    const t0 = Date.now();
    run.kill();
    await c.done;
    assert.deepEqual(c.events.at(-1), { type: 'exited', code: agent.sigtermExitCode, error: 'killed' });
    assert.ok(Date.now() - t0 < 2_000);
  });

  test('[[hang]] ignoring SIGTERM is SIGKILLed after the grace period', async () => {
    const run = start('[[hang]]', { FAKE_IGNORE_SIGTERM: '1' });
    const c = collect(run);
    await c.waitFor((e) => e.type === 'started');
    run.kill();
    await c.done;
    assert.deepEqual(c.events.at(-1), { type: 'exited', code: null, error: 'killed' });
  });

  test('end() after a turn → exited 0; send() afterwards throws', async () => {
    const run = start('once');
    const c = collect(run);
    await c.waitFor((e) => e.type === 'turnEnd');
    await endRun(run, c);
    assert.throws(() => run.send('more'), /ended/);
  });

  test('check(): runs --version on the executable; a missing one is reported', async () => {
    assert.deepEqual(await agent.harness().check(), { ok: true, executable: agent.fake, version: agent.version });
    const missing = agent.missingHarness();
    const result = await missing.check();
    assert.equal(result.ok, false);
    assert.match(result.problem ?? '', /--version` failed/);
    const c = collect(missing.start(agent.spec('hi')));
    await c.done;
    assert.match((c.events.at(-1) as { error?: string }).error ?? '', /could not start .*nope/);
  });
}
