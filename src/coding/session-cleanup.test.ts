// SessionCleanup over a real SessionPool, stand-in sessions and a recording store and logs: the age-based release of
// memory, the eviction beyond maxPersistedSessions, and which of them a session's end starts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../core/clock.ts';
import { loadConfig } from '../core/config-load.ts';
import type { Session } from './session.ts';
import { SessionCleanup } from './session-cleanup.ts';
import { SessionPool } from './session-pool.ts';

const HOUR = 3_600_000;

/** A session in memory as the cleanup sees it. */
function session(completedAt: number | null, state: { active?: boolean; attached?: boolean } = {}): Session {
  return {
    record: { completedAt },
    isActive: state.active ?? false,
    attached: state.attached ?? false,
  } as unknown as Session;
}

function setup(candidates: string[] = []) {
  const clock = new ManualClock();
  const { config } = loadConfig({
    env: {},
    overrides: { maxPersistedSessions: 2, 'timings.cleanupMaxAgeMs': HOUR },
  });
  const pool = new SessionPool({ resolve: async () => null });
  const deleted: string[] = [];
  const released: string[] = [];
  const removed: string[] = [];
  const cleanup = new SessionCleanup({
    clock,
    config,
    pool,
    store: {
      evictionCandidates: async (keep) => {
        assert.equal(keep, 2);
        return candidates;
      },
      delete: async (id) => {
        deleted.push(id);
      },
    },
    logs: {
      release: async (id) => {
        released.push(id);
      },
      remove: (id) => {
        removed.push(id);
      },
    },
  });
  return { clock, pool, cleanup, deleted, released, removed };
}

describe('SessionCleanup', () => {
  it('release: drops from memory only the sessions finished longer ago than cleanupMaxAgeMs', async () => {
    const { clock, pool, cleanup, released } = setup();
    const start = clock.now();
    pool.add('old', session(start));
    pool.add('old-attached', session(start, { attached: true }));
    pool.add('running', session(null, { active: true }));
    clock.advance(HOUR / 2);
    pool.add('recent', session(clock.now()));
    clock.advance(HOUR / 2 + 1);
    assert.equal(await cleanup.release(), 1);
    assert.deepEqual(released, ['old']);
    assert.deepEqual(
      [...pool.entries()].map(([id]) => id),
      ['old-attached', 'running', 'recent'],
    );
  });

  it("evict: deletes the store's candidates (row, log, memory) except a session someone is attached to", async () => {
    const { pool, cleanup, deleted, removed } = setup(['a', 'b', 'watched']);
    pool.add('a', session(1));
    pool.add('watched', session(1, { attached: true }));
    assert.equal(await cleanup.evict(), 2);
    assert.deepEqual(deleted, ['a', 'b']);
    assert.deepEqual(removed, ['a', 'b']);
    assert.deepEqual(
      [...pool.entries()].map(([id]) => id),
      ['watched'],
    );
  });

  it('evict does not look at every session in memory (a burst of ends would cost the square of the sessions)', async () => {
    const { pool, cleanup } = setup(['gone']);
    pool.entries = () => assert.fail('evict walked the sessions in memory');
    assert.equal(await cleanup.evict(), 1);
  });

  it('run: releases and evicts', async () => {
    const { clock, pool, cleanup, released, deleted } = setup(['evicted']);
    pool.add('old', session(clock.now()));
    clock.advance(HOUR + 1);
    assert.deepEqual(await cleanup.run(), { released: 1, evicted: 1 });
    assert.deepEqual(released, ['old']);
    assert.deepEqual(deleted, ['evicted']);
  });
});
