import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { tempDir } from '../../test/support/temp-dir.ts';
import { checkExecutable, lastLines } from './version-check.ts';

const dir = tempDir('sb-version-check-');
after(() => dir.remove());

/** A JS entry point (run through this Node) with the given body. */
function script(name: string, body: string): string {
  const path = join(dir.path, `${name}.mjs`);
  writeFileSync(path, body);
  return path;
}

const missing = { executable: 'agent', problem: 'agent not found (set harnesses.agent.executable)' };

test('lastLines: the last non-blank lines, trimmed, joined with " | "', () => {
  assert.equal(lastLines('a\n\n  b  \nc\nd\n\n'), 'b | c | d');
  assert.equal(lastLines('one\ntwo', 1), 'two');
  assert.equal(lastLines(' \n\n'), '');
});

test('no executable: the missing report as given', async () => {
  assert.deepEqual(await checkExecutable(undefined, process.env, missing), { ok: false, ...missing });
});

test('an executable that prints its version: ok with the first line', async () => {
  const agent = script('versioned', "process.stdout.write('agent 1.2.3\\nbuilt today\\n');\n");
  assert.deepEqual(await checkExecutable(agent, process.env, missing), {
    ok: true,
    executable: agent,
    version: 'agent 1.2.3',
  });
});

test('an executable that prints nothing: ok without a version', async () => {
  const agent = script('silent', '');
  assert.deepEqual(await checkExecutable(agent, process.env, missing), { ok: true, executable: agent });
});

test('--version runs in the given environment', async () => {
  const agent = script('env', 'process.stdout.write(`${process.env.AGENT_FLAVOUR}\\n`);\n');
  assert.deepEqual(await checkExecutable(agent, { ...process.env, AGENT_FLAVOUR: 'mint' }, missing), {
    ok: true,
    executable: agent,
    version: 'mint',
  });
});

test('a failing --version: the problem names the command, the failure and the stderr tail', async () => {
  const agent = script(
    'failing',
    "process.stderr.write('line 1\\nline 2\\n\\nline 3\\nline 4\\n');\nprocess.exit(3);\n",
  );
  const result = await checkExecutable(agent, process.env, missing);
  assert.equal(result.ok, false);
  assert.equal(result.executable, agent);
  assert.match(
    result.problem ?? '',
    /^`.*failing\.mjs --version` failed: Command failed: .*: line 2 \| line 3 \| line 4$/,
  );
});

test('a missing file: the problem says --version failed', async () => {
  const agent = join(dir.path, 'nope');
  const result = await checkExecutable(agent, process.env, missing);
  assert.equal(result.ok, false);
  assert.match(result.problem ?? '', /nope --version` failed: .*ENOENT/);
});
