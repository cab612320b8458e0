// SessionWrites: patches change the record at once and are tracked until committed; views are kept on the row.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { storedSession } from '../../test/support/stored-session.ts';
import type { SessionPatch } from '../store/coding-session-types.ts';
import type { SessionLogEntry } from './session-log.ts';
import { SessionWrites } from './session-writes.ts';

function rig(update: (patch: SessionPatch) => Promise<void> = async () => {}) {
  const record = storedSession();
  const log: SessionLogEntry[] = [];
  const patches: SessionPatch[] = [];
  const writes = new SessionWrites(record, {
    log: (entry) => {
      log.push(entry);
      return { seq: log.length };
    },
    update: (patch) => {
      patches.push(patch);
      return update(patch);
    },
  });
  return { record, log, patches, writes };
}

describe('SessionWrites', () => {
  it('log appends and returns the seq', () => {
    const r = rig();
    assert.deepEqual(r.writes.log({ type: 'output', text: 'a' }), { seq: 1 });
    assert.deepEqual(r.log, [{ type: 'output', text: 'a' }]);
  });

  it('a patch changes the record at once and is written; an empty one writes nothing', async () => {
    const r = rig();
    const write = r.writes.persist({ costUsd: 1 });
    assert.equal(r.record.costUsd, 1);
    await write;
    await r.writes.persist({});
    assert.deepEqual(r.patches, [{ costUsd: 1 }]);
  });

  it('stored settles after every write so far, and rejects with the first that failed', async () => {
    const r = rig((patch) => (patch.costUsd === 2 ? Promise.reject(new Error('row gone')) : Promise.resolve()));
    void r.writes.persist({ costUsd: 1 });
    await r.writes.stored;
    r.writes.persist({ costUsd: 2 }).catch(() => {});
    void r.writes.persist({ costUsd: 3 });
    await assert.rejects(r.writes.stored, /row gone/);
  });

  it('a view is logged (`foreground`) and kept on the row; marking it seen touches the row only, when it moved', async () => {
    const r = rig();
    await r.writes.setView('web|x', { on: true, seenSeq: 0 });
    assert.deepEqual(r.log, [{ type: 'foreground', channel: 'web|x', on: true }]);
    r.writes.markSeen('web|x', 4);
    r.writes.markSeen('web|x', 4);
    r.writes.markSeen('telegram|a|1', 4);
    await r.writes.stored;
    assert.deepEqual(r.record.foreground, { 'web|x': { on: true, seenSeq: 4 } });
    assert.equal(r.patches.length, 2);
    assert.equal(r.log.length, 1);
  });
});
