// One page of `sessions.list` (the operation: input validation, the paged query, summaries) beside the same SELECT
// run bare on the same database (the SQL the store's query builder compiles, prepared once on node:sqlite; rows left
// as SQLite returns them), at 100 and at 10,000 stored sessions,
// for the first page and for a page deep in the list (after a cursor), in the same run.
// Run: npm run bench:list   (or: node bench/session-list.ts [iterations] [pageSize])
import { systemClock } from '../src/core/clock.ts';
import { loadConfig } from '../src/core/config-load.ts';
import { decodeCursor } from '../src/core/cursor.ts';
import type { SessionListResult } from '../src/operations/list.ts';
import type { OperationServices } from '../src/operations/operation.ts';
import { rpcMethods } from '../src/operations/rpc-methods.ts';
import { OPERATIONS } from '../src/operations/table.ts';
import { listingPageQuery } from '../src/store/coding-session-listings.ts';
import type { StoredSession } from '../src/store/coding-session-types.ts';
import { sqliteKysely } from '../src/store/kysely/connection.ts';
import { ScriptedHarness } from '../test/support/scripted-harness.ts';
import { sessionManagerIn } from '../test/support/session-manager-in.ts';
import { storedSession } from '../test/support/stored-session.ts';
import { tempDir } from '../test/support/temp-dir.ts';
import { percentile, printTable } from './stats.ts';

const iterations = Number(process.argv[2] ?? 2_000);
const pageSize = Number(process.argv[3] ?? 50);
const list = rpcMethods(OPERATIONS).get('sessions.list');
if (!list) throw new Error('sessions.list is not an RPC method');

function stored(i: number): StoredSession {
  const prompt = `fix the flaky test number ${i} in the parser and open a pull request when the suite is green`;
  const startedAt = 1_767_225_600_000 + i * 1_000;
  return storedSession(
    {
      id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      name: `fix-flaky-test-${i}`,
      status: i % 7 === 0 ? 'failed' : 'completed',
      prompt,
      workdir: '/home/dev/src/parser',
      model: 'sonnet',
      backendSessionId: `b-${i}`,
      originChannel: 'telegram|42',
      costUsd: 0.1234,
      startedAt,
      completedAt: startedAt + 600,
      updatedAt: startedAt + 600,
      endReason: 'done',
      foreground: { 'telegram|42': { on: false, seenSeq: 12 } },
    },
    { model: 'sonnet', permissionMode: 'bypassPermissions' },
  );
}

/** Times `fn`; `before` (not timed) runs ahead of each call. */
async function time(fn: () => unknown, before?: (i: number) => Promise<void>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < iterations + 200; i += 1) {
    await before?.(i);
    const start = performance.now();
    await fn();
    if (i >= 200) out.push(performance.now() - start); // the first 200 warm up
  }
  return out;
}

const rows: (string | number)[][] = [];
const ratios: string[] = [];
for (const count of [100, 10_000]) {
  const dir = tempDir('sb-bench-list-');
  const { config } = loadConfig({ home: dir.path, env: {}, overrides: { workspaces: [dir.path] } });
  const harness = new ScriptedHarness('claude');
  const clock = systemClock();
  const { db, store, manager } = sessionManagerIn(dir.path, config, clock, {
    claude: harness,
    codex: harness,
    gemini: harness,
  });
  try {
    db.exec('PRAGMA synchronous = OFF'); // setup only: 10,000 inserts without an fsync each
    for (let i = 0; i < count; i += 1) await store.insert(stored(i));
    db.exec('PRAGMA synchronous = FULL');
    const services: OperationServices = { config, sessions: manager, clock };
    const first = (await list.call({ limit: pageSize }, { kind: 'rpc' }, services)) as SessionListResult;
    // A cursor half way down the list.
    let deep = first.nextCursor;
    for (let skipped = pageSize; deep && skipped < count / 2; skipped += pageSize) {
      deep = ((await list.call({ limit: pageSize, cursor: deep }, { kind: 'rpc' }, services)) as SessionListResult)
        .nextCursor;
    }
    if (!deep) throw new Error('no cursor half way down the list');
    const deepPage = (await list.call(
      { limit: pageSize, cursor: deep },
      { kind: 'rpc' },
      services,
    )) as SessionListResult;
    if (deepPage.sessions.length === 0) throw new Error('empty deep page');
    const deepKey = decodeCursor(deep);
    const compiledFirst = listingPageQuery(sqliteKysely(db), { limit: pageSize + 1 }).compile();
    const compiledAfter = listingPageQuery(sqliteKysely(db), {
      limit: pageSize + 1,
      after: [deepKey[0], String(deepKey[1])],
    }).compile();
    const bareFirst = db.prepare(compiledFirst.sql);
    const bareAfter = db.prepare(compiledAfter.sql);
    const firstParams = compiledFirst.parameters as (string | number)[];
    const afterParams = compiledAfter.parameters as (string | number)[];
    const variants: [string, () => unknown, () => unknown][] = [
      [
        'first page',
        () => bareFirst.all(...firstParams),
        () => list.call({ limit: pageSize }, { kind: 'rpc' }, services),
      ],
      [
        'page after a cursor',
        () => bareAfter.all(...afterParams),
        () => list.call({ limit: pageSize, cursor: deep }, { kind: 'rpc' }, services),
      ],
    ];
    // The store answers a page again from memory until its next write: "after a write" times the first read after
    // one (the write itself untimed), "unchanged" a page asked again with no write since.
    const touched = (stored(0) as { id: string }).id;
    const write = (i: number): Promise<void> => store.update(touched, { updatedAt: i });
    for (const [label, bare, ours] of variants) {
      const b = await time(bare, write);
      const o = await time(ours, write);
      const bareAgain = await time(bare);
      const again = await time(ours);
      const ratio = percentile(o, 50) / percentile(b, 50);
      rows.push([
        `${count} sessions, ${label}, after a write: bare SELECT`,
        percentile(b, 50) * 1000,
        percentile(b, 99) * 1000,
        '',
      ]);
      rows.push([
        `${count} sessions, ${label}, after a write: sessions.list`,
        percentile(o, 50) * 1000,
        percentile(o, 99) * 1000,
        `${ratio.toFixed(2)}x`,
      ]);
      rows.push([
        `${count} sessions, ${label}, unchanged: bare SELECT`,
        percentile(bareAgain, 50) * 1000,
        percentile(bareAgain, 99) * 1000,
        '',
      ]);
      rows.push([
        `${count} sessions, ${label}, unchanged: sessions.list`,
        percentile(again, 50) * 1000,
        percentile(again, 99) * 1000,
        `${(percentile(again, 50) / percentile(bareAgain, 50)).toFixed(2)}x`,
      ]);
      ratios.push(`${count} sessions, ${label}: ${ratio.toFixed(2)}x bare after a write`);
    }
  } finally {
    await manager.stop();
    db.close();
    dir.remove();
  }
}
console.log(`sessions.list pages of ${pageSize}, ${iterations} calls per variant, operation-level (no HTTP), µs`);
printTable(['variant', 'p50 µs', 'p99 µs', 'p50 vs bare'], rows);
for (const r of ratios) console.log(r);
