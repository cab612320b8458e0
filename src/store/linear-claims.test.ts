import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from '../../test/support/temp-dir.ts';
import { openDatabase } from './database.ts';
import { LinearClaimStore } from './linear-claims.ts';

const WINDOW = 600_000;

describe('LinearClaimStore', () => {
  it('gives a key to its first owner; the same owner again keeps it, another does not get it; it survives a reopen', () => {
    const dir = tempDir('sb-claims-');
    const path = join(dir.path, 'state.db');
    const db = openDatabase(path);
    const claims = new LinearClaimStore(db);
    assert.equal(claims.claim('comment:1', 'mention:qa', 1), true);
    assert.equal(claims.claim('comment:1', 'mention:qa', 2), true, 'a redelivery of the same path');
    assert.equal(claims.claim('comment:1', 'notification', 3), false);
    db.close();
    const reopened = new LinearClaimStore(openDatabase(path));
    assert.equal(reopened.owner('comment:1'), 'mention:qa');
    assert.equal(reopened.claim('comment:1', 'notification', 4), false);
    dir.remove();
  });

  it('pairs an assignment reported by both webhooks within the window, in either order, once', () => {
    const claims = new LinearClaimStore(openDatabase(':memory:'));
    const first = claims.recordAssignment({ issueId: 'i1', source: 'issue', deliveryId: 'a', now: 1_000, windowMs: WINDOW });
    assert.equal(first.kind, 'new');
    claims.setAssignmentSession(first.seq, 'as-1');
    assert.deepEqual(claims.recordAssignment({ issueId: 'i1', source: 'issue', deliveryId: 'a', now: 2_000, windowMs: WINDOW }), {
      kind: 'redelivery',
      seq: first.seq,
      agentSessionId: 'as-1',
      paired: false,
    });
    const second = claims.recordAssignment({ issueId: 'i1', source: 'notification', deliveryId: 'b', now: 3_000, windowMs: WINDOW });
    assert.deepEqual(second, { kind: 'paired', seq: second.seq, pairedWith: first.seq });
    assert.equal(claims.recordAssignment({ issueId: 'i1', source: 'notification', deliveryId: 'b', now: 4_000, windowMs: WINDOW }).kind, 'redelivery');
    // A second notification for the same issue is a new assignment (its partner is taken).
    assert.equal(claims.recordAssignment({ issueId: 'i1', source: 'notification', deliveryId: 'c', now: 5_000, windowMs: WINDOW }).kind, 'new');
    // Notification first, then the Issue webhook.
    assert.equal(claims.recordAssignment({ issueId: 'i2', source: 'notification', deliveryId: 'd', now: 1_000, windowMs: WINDOW }).kind, 'new');
    assert.equal(claims.recordAssignment({ issueId: 'i2', source: 'issue', deliveryId: 'e', now: 1_500, windowMs: WINDOW }).kind, 'paired');
  });

  it('treats reports further apart than the window as two assignments, and prunes old rows', () => {
    const claims = new LinearClaimStore(openDatabase(':memory:'));
    assert.equal(claims.recordAssignment({ issueId: 'i1', source: 'issue', deliveryId: 'a', now: 0, windowMs: WINDOW }).kind, 'new');
    assert.equal(claims.recordAssignment({ issueId: 'i1', source: 'notification', deliveryId: 'b', now: WINDOW + 1, windowMs: WINDOW }).kind, 'new');
    claims.claim('comment:old', 'x', 0);
    claims.claim('comment:new', 'x', WINDOW * 2);
    assert.equal(claims.prune(WINDOW), 2, "the first assignment and the old claim");
    assert.equal(claims.owner('comment:old'), null);
    assert.equal(claims.owner('comment:new'), 'x');
  });
});
