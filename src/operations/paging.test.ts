import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { StoreManagerFixture } from '../../test/support/manager-on-store.ts';
import { openManagerFixture } from '../../test/support/manager-on-store.ts';
import { storedSession } from '../../test/support/stored-session.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import { AppError } from '../core/errors.ts';
import { pageOf } from '../core/page.ts';
import type { StoredSession } from '../store/coding-session-types.ts';
import { runCommand } from './commands.ts';
import type { SessionListResult } from './list.ts';
import type { OperationServices } from './operation.ts';
import { rpcMethods } from './rpc-methods.ts';
import { OPERATIONS } from './table.ts';

function stored(i: number, startedAt: number, status: StoredSession['status'] = 'completed'): StoredSession {
  return storedSession(
    {
      id: `id-${String(i).padStart(3, '0')}`,
      name: `s-${i}`,
      status,
      prompt: `prompt ${i}`,
      startedAt,
      completedAt: startedAt + 1,
      updatedAt: startedAt + 1,
    },
    { maxBudgetUsd: 1, permissionMode: 'bypassPermissions' },
  );
}

describe('pageOf (lists held in memory)', () => {
  const items = [
    { t: 5, id: 'a' },
    { t: 9, id: 'b' },
    { t: 5, id: 'c' },
    { t: 1, id: 'd' },
    { t: 7, id: 'e' },
  ];
  const key = (x: { t: number; id: string }) => [x.t, x.id] as const;

  it('returns newest first, page by page, until nextCursor is null', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = pageOf(items, { limit: 2, ...(cursor ? { cursor } : {}) }, key);
      seen.push(...page.items.map((x) => x.id));
      cursor = page.nextCursor ?? undefined;
      pages += 1;
    } while (cursor);
    assert.deepEqual(seen, ['b', 'e', 'c', 'a', 'd']);
    assert.equal(pages, 3);
  });

  it('gives no next cursor when the page holds the rest, and refuses a cursor it did not make', async () => {
    assert.equal(pageOf(items, { limit: 5 }, key).nextCursor, null);
    assert.throws(
      () => pageOf(items, { limit: 5, cursor: 'not-a-cursor' }, key),
      (e: unknown) => e instanceof AppError && e.field === 'cursor',
    );
  });
});

describe('sessions.list paging', () => {
  let f: StoreManagerFixture;
  let services: OperationServices;
  beforeEach(async () => {
    f = await openManagerFixture((path) => openTestStore(path));
    services = { config: f.config, sessions: f.manager, clock: f.clock };
    // Three sessions share a start time: the id breaks the tie (zero-padded, the ids sort in insertion order).
    for (let i = 0; i < 120; i += 1)
      await f.store.insert(stored(i, 1_000 + Math.floor(i / 3), i % 4 === 0 ? 'failed' : 'completed'));
  });
  afterEach(async () => {
    await f.close();
  });

  const list = async (params: Record<string, unknown>): Promise<SessionListResult> =>
    (await rpcMethods(OPERATIONS).get('sessions.list')?.call(params, { kind: 'rpc' }, services)) as SessionListResult;

  it('pages 50 at a time by default, newest first, each session once, and says the next cursor', async () => {
    const first = await list({});
    assert.equal(first.count, 50);
    assert.equal(first.sessions[0]?.name, 's-119');
    assert.ok(first.nextCursor);
    const names: string[] = first.sessions.map((s) => s.name);
    let cursor: string | null = first.nextCursor;
    while (cursor) {
      const page = await list({ cursor });
      names.push(...page.sessions.map((s) => s.name));
      cursor = page.nextCursor;
    }
    assert.deepEqual(
      names,
      Array.from({ length: 120 }, (_, i) => `s-${119 - i}`),
    );
  });

  it('pages a status filter with limit, and the legacy method passes the cursor on', async () => {
    const page = await list({ status: 'failed', limit: 7 });
    assert.deepEqual(
      page.sessions.map((s) => s.name),
      ['s-116', 's-112', 's-108', 's-104', 's-100', 's-96', 's-92'],
    );
    const next = await list({ status: 'failed', limit: 100, cursor: page.nextCursor });
    assert.equal(next.count, 23);
    assert.equal(next.nextCursor, null);
    const legacy = (await rpcMethods(OPERATIONS)
      .get('claude-code.sessions')
      ?.call({ limit: 2 }, { kind: 'rpc' }, services)) as { count: number; nextCursor: string | null };
    assert.equal(legacy.count, 2);
    assert.ok(legacy.nextCursor);
  });

  it('a page asked again after a write shows the write (launch, update, delete)', async () => {
    const before = await list({ limit: 2 });
    assert.deepEqual(
      before.sessions.map((s) => [s.name, s.status]),
      [
        ['s-119', 'completed'],
        ['s-118', 'completed'],
      ],
    );
    await f.store.update('id-119', { status: 'killed' });
    await f.store.delete('id-118');
    assert.deepEqual(
      (await list({ limit: 2 })).sessions.map((s) => [s.name, s.status]),
      [
        ['s-119', 'killed'],
        ['s-117', 'completed'],
      ],
    );
    f.clock.advance(1_000_000);
    const launched = await f.manager.launch({
      prompt: 'new work',
      workdir: f.workdir,
      originChannel: 'cli',
      name: 'newest',
    });
    const after = await list({ limit: 2 });
    assert.deepEqual(
      after.sessions.map((s) => s.name),
      ['newest', 's-119'],
    );
    assert.equal(after.sessions[0]?.id, launched.id);
  });

  it('refuses a bad limit or cursor naming the field, and the chat reply says how to get more', async () => {
    await assert.rejects(list({ limit: 0 }), (e: unknown) => e instanceof AppError && e.field === 'limit');
    await assert.rejects(list({ cursor: 'bogus' }), (e: unknown) => e instanceof AppError && e.field === 'cursor');
    const reply = await runCommand(
      OPERATIONS,
      '/claude_sessions --limit 2 failed',
      { kind: 'chat', channel: 'telegram|1', userId: '1' },
      services,
    );
    assert.match(reply ?? '', /s-116[\s\S]*s-112[\s\S]*… more: ask again with cursor \S+$/);
  });
});
