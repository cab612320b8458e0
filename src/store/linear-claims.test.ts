import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { tempDir } from '../../test/support/temp-dir.ts';
import { openDatabase } from './database.ts';
import { sqliteKysely } from './kysely/connection.ts';
import { LinearClaimStore } from './linear-claims.ts';

const WINDOW = 600_000;

describe('LinearClaimStore on a SQLite file', () => {
  it('gives a key to its first owner; the same owner again keeps it, another does not get it; it survives a reopen', async () => {
    const dir = tempDir('sb-claims-');
    const path = join(dir.path, 'state.db');
    const db = openDatabase(path);
    const claims = new LinearClaimStore(sqliteKysely(db));
    assert.equal(await claims.claim('comment:1', 'mention:qa', 1), true);
    assert.equal(await claims.claim('comment:1', 'mention:qa', 2), true, 'a redelivery of the same path');
    assert.equal(await claims.claim('comment:1', 'notification', 3), false);
    db.close();
    const reopenedDb = openDatabase(path);
    const reopened = new LinearClaimStore(sqliteKysely(reopenedDb));
    assert.equal(await reopened.owner('comment:1'), 'mention:qa');
    assert.equal(await reopened.claim('comment:1', 'notification', 4), false);
    reopenedDb.close();
    dir.remove();
  });
});

describeEachDatabase('LinearClaimStore', (fresh) => {
  it('gives a key to its first owner; the same owner again keeps it, another does not get it; a release frees it', async () => {
    const claims = new LinearClaimStore((await fresh()).db);
    assert.equal(await claims.claim('comment:1', 'mention:qa', 1), true);
    assert.equal(await claims.claim('comment:1', 'mention:qa', 2), true, 'a redelivery of the same path');
    assert.equal(await claims.claim('comment:1', 'notification', 3), false);
    await claims.release('comment:1', 'notification');
    assert.equal(await claims.owner('comment:1'), 'mention:qa', 'only the owner releases');
    await claims.release('comment:1', 'mention:qa');
    assert.equal(await claims.owner('comment:1'), null);
  });

  it('pairs an assignment reported by both webhooks within the window, in either order, once', async () => {
    const claims = new LinearClaimStore((await fresh()).db);
    const first = await claims.recordAssignment({
      issueId: 'i1',
      source: 'issue',
      deliveryId: 'a',
      now: 1_000,
      windowMs: WINDOW,
    });
    assert.equal(first.kind, 'new');
    await claims.setAssignmentSession(first.seq, 'as-1');
    assert.deepEqual(
      await claims.recordAssignment({ issueId: 'i1', source: 'issue', deliveryId: 'a', now: 2_000, windowMs: WINDOW }),
      {
        kind: 'redelivery',
        seq: first.seq,
        agentSessionId: 'as-1',
        paired: false,
      },
    );
    const second = await claims.recordAssignment({
      issueId: 'i1',
      source: 'notification',
      deliveryId: 'b',
      now: 3_000,
      windowMs: WINDOW,
    });
    assert.deepEqual(second, { kind: 'paired', seq: second.seq, pairedWith: first.seq });
    assert.equal(
      (
        await claims.recordAssignment({
          issueId: 'i1',
          source: 'notification',
          deliveryId: 'b',
          now: 4_000,
          windowMs: WINDOW,
        })
      ).kind,
      'redelivery',
    );
    // A second notification for the same issue is a new assignment (its partner is taken).
    assert.equal(
      (
        await claims.recordAssignment({
          issueId: 'i1',
          source: 'notification',
          deliveryId: 'c',
          now: 5_000,
          windowMs: WINDOW,
        })
      ).kind,
      'new',
    );
    // Notification first, then the Issue webhook.
    assert.equal(
      (
        await claims.recordAssignment({
          issueId: 'i2',
          source: 'notification',
          deliveryId: 'd',
          now: 1_000,
          windowMs: WINDOW,
        })
      ).kind,
      'new',
    );
    assert.equal(
      (await claims.recordAssignment({ issueId: 'i2', source: 'issue', deliveryId: 'e', now: 1_500, windowMs: WINDOW }))
        .kind,
      'paired',
    );
  });

  it('treats reports further apart than the window as two assignments, and prunes old rows', async () => {
    const claims = new LinearClaimStore((await fresh()).db);
    assert.equal(
      (await claims.recordAssignment({ issueId: 'i1', source: 'issue', deliveryId: 'a', now: 0, windowMs: WINDOW }))
        .kind,
      'new',
    );
    assert.equal(
      (
        await claims.recordAssignment({
          issueId: 'i1',
          source: 'notification',
          deliveryId: 'b',
          now: WINDOW + 1,
          windowMs: WINDOW,
        })
      ).kind,
      'new',
    );
    await claims.claim('comment:old', 'x', 0);
    await claims.claim('comment:new', 'x', WINDOW * 2);
    assert.equal(await claims.prune(WINDOW), 2, 'the first assignment and the old claim');
    assert.equal(await claims.owner('comment:old'), null);
    assert.equal(await claims.owner('comment:new'), 'x');
  });
});
