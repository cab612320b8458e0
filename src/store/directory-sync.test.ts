import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from '../../test/support/temp-dir.ts';
import { DirectorySync } from './directory-sync.ts';
import { fsyncDirectoryAsync, JsonlLog } from './jsonl-log.ts';

/** A sync whose rounds the test ends by hand; `started` lists the folders in the order their syncs began. */
function manualSync(): { sync: DirectorySync; started: string[]; finish: (error?: Error) => void } {
  const started: string[] = [];
  const ends: ((error?: Error) => void)[] = [];
  const sync = new DirectorySync((dir) => {
    started.push(dir);
    return new Promise<void>((resolve, reject) => ends.push((error) => (error ? reject(error) : resolve())));
  });
  return {
    sync,
    started,
    finish: (error) => {
      const end = ends.shift();
      assert.ok(end, 'no sync is running');
      end(error);
    },
  };
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('DirectorySync', () => {
  it('callers that arrive while a sync runs share the next one, which starts after it', async () => {
    const { sync, started, finish } = manualSync();
    const settled: string[] = [];
    const first = sync.sync('/d').then(() => settled.push('first'));
    const during = Array.from({ length: 50 }, (_, i) => sync.sync('/d').then(() => settled.push(`during ${i}`)));
    assert.deepEqual(started, ['/d']);
    finish();
    await first;
    await tick();
    // The first round began before the others' entries were made: they are not durable yet.
    assert.deepEqual(settled, ['first']);
    assert.deepEqual(started, ['/d', '/d'], 'one more sync for all fifty');
    finish();
    await Promise.all(during);
    assert.equal(settled.length, 51);
    // Nothing runs any more: the next caller starts a round of its own at once.
    const later = sync.sync('/d');
    assert.equal(started.length, 3);
    finish();
    await later;
  });

  it('folders are synced independently', async () => {
    const { sync, started, finish } = manualSync();
    const a = sync.sync('/a');
    const b = sync.sync('/b');
    assert.deepEqual(started, ['/a', '/b']);
    finish();
    finish();
    await Promise.all([a, b]);
  });

  it('a failed sync rejects its own callers only; those waiting for the next round still get one', async () => {
    const { sync, started, finish } = manualSync();
    const first = sync.sync('/d');
    const next = sync.sync('/d');
    finish(new Error('EIO'));
    await assert.rejects(first, /EIO/);
    await tick();
    assert.equal(started.length, 2);
    finish();
    await next;
  });

  it('logs created together in one folder share its sync, and each is durable once it resolves', async () => {
    const dir = tempDir();
    try {
      let syncs = 0;
      const shared = new DirectorySync((path) => {
        syncs += 1;
        return fsyncDirectoryAsync(path);
      });
      const logs = Array.from({ length: 20 }, (_, i) =>
        JsonlLog.open(join(dir.path, `${i}.jsonl`), { now: () => 1, directorySync: shared }),
      );
      await Promise.all(logs.map((log) => log.append({ type: 'a' })));
      assert.ok(syncs <= 2, `20 new logs synced their folder ${syncs} times`);
      for (const log of logs) await log.close();
    } finally {
      dir.remove();
    }
  });
});
