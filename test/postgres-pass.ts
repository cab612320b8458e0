// The second pass of `npm test`: every component suite that opens its database through test/support/test-store.ts
// runs again with TEST_DATABASE=postgres, each on databases of a real PostgreSQL the test process starts (the store
// suites already run on both through describeEachDatabase). Without PostgreSQL it says what it skipped and why (in CI,
// with TEST_REQUIRE_POSTGRES=1, a missing server fails instead).
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { postgresSkip } from './support/postgres.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Test files under `dir` that open their database with openTestStore. */
function suitesIn(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== 'node_modules') found.push(...suitesIn(path));
    else if (entry.name.endsWith('.test.ts') && readFileSync(path, 'utf8').includes('openTestStore(')) found.push(path);
  }
  return found;
}

const suites = [...suitesIn(join(root, 'src')), ...suitesIn(join(root, 'test'))].map((p) => relative(root, p)).sort();
const skip = postgresSkip();
if (skip) {
  console.log(`# PostgreSQL pass skipped (${suites.length} component suites): ${skip}`);
} else {
  console.log(`# PostgreSQL pass: ${suites.length} component suites with TEST_DATABASE=postgres`);
  const run = spawnSync(process.execPath, ['--test', '--test-concurrency=2', ...suites], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, TEST_DATABASE: 'postgres' },
  });
  process.exitCode = run.status ?? 1;
}
