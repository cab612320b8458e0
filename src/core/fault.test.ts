import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const FAULT = fileURLToPath(new URL('./fault.ts', import.meta.url));

function run(env: string | undefined): { signal: NodeJS.Signals | null; stdout: string } {
  const script = `import { faultPoint } from ${JSON.stringify(FAULT)};
for (let i = 1; i <= 3; i++) { faultPoint('step.a'); process.stdout.write('a' + i + ' '); }
faultPoint('step.b'); process.stdout.write('b');`;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, SWITCHBOARD_FAULT: env ?? '' },
    encoding: 'utf8',
  });
  return { signal: result.signal, stdout: result.stdout };
}

test('faultPoint does nothing when no step is armed', () => {
  const result = run(undefined);
  assert.equal(result.signal, null);
  assert.equal(result.stdout, 'a1 a2 a3 b');
});

test('faultPoint kills the process at the armed step, at its n-th arrival', () => {
  assert.deepEqual(run('step.b'), { signal: 'SIGKILL', stdout: 'a1 a2 a3 ' });
  assert.deepEqual(run('step.a@2'), { signal: 'SIGKILL', stdout: 'a1 ' });
  assert.deepEqual(run('other, step.a'), { signal: 'SIGKILL', stdout: '' });
});
