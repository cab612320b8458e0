import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { tempDir } from '../../test/support/temp-dir.ts';
import { openDatabase } from './database.ts';
import type { DatabaseSync } from './database.ts';
import { IdempotencyKeyStore } from './idempotency-keys.ts';

describe('IdempotencyKeyStore', () => {
  let dir: { path: string; remove: () => void };
  let db: DatabaseSync;

  beforeEach(() => {
    dir = tempDir('sb-idem-');
    db = openDatabase(join(dir.path, 'state.db'));
  });
  afterEach(() => {
    db.close();
    dir.remove();
  });

  it('claims a key once per process: a repeat while it runs is in progress; after it is done, the answer is replayed', () => {
    const keys = new IdempotencyKeyStore(db, 'proc-1');
    assert.deepEqual(keys.claim('hooks:wake', 'k', 'h1', 1), { kind: 'new' });
    assert.deepEqual(keys.claim('hooks:wake', 'k', 'h1', 2), { kind: 'in-progress' });
    assert.deepEqual(keys.claim('hooks:wake', 'k', 'h2', 2), { kind: 'mismatch' });
    assert.deepEqual(keys.claim('rpc:sessions.launch', 'k', 'h2', 2), { kind: 'new' }, 'scoped per caller and method');
    keys.complete('hooks:wake', 'k', '{"ok":true}', 3);
    assert.deepEqual(keys.claim('hooks:wake', 'k', 'h1', 4), { kind: 'replay', response: '{"ok":true}' });
  });

  it('a claim left by a process that died is taken over once; a released claim is new again; prune forgets old keys', () => {
    new IdempotencyKeyStore(db, 'dead').claim('hooks:wake', 'k', 'h', 1);
    const keys = new IdempotencyKeyStore(db, 'alive');
    assert.deepEqual(keys.claim('hooks:wake', 'k', 'h', 2), { kind: 'taken-over' });
    assert.deepEqual(keys.claim('hooks:wake', 'k', 'h', 3), { kind: 'in-progress' }, 'now this process runs it');
    keys.release('hooks:wake', 'k');
    assert.deepEqual(keys.claim('hooks:wake', 'k', 'h', 4), { kind: 'new' });
    keys.complete('hooks:wake', 'k', '1', 5);
    keys.release('hooks:wake', 'k');
    assert.equal(keys.claim('hooks:wake', 'k', 'h', 6).kind, 'replay', 'a done key is not released');
    assert.equal(keys.prune(5), 1);
    assert.deepEqual(keys.claim('hooks:wake', 'k', 'h', 7), { kind: 'new' });
  });
});
