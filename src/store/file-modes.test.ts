// Everything the stores create is owner-only (files 0600, folders 0700) under the usual umask 022, and the start-up pass
// tightens a home an older version or the user left open.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { modesUnder, notOwnerOnly } from '../../test/support/file-modes.ts';
import { tempDirPerTest } from '../../test/support/temp-dir.ts';
import { ArtifactDir, ensureLines, writeFileAtomic } from './artifact-files.ts';
import { acquireDaemonLock, releaseDaemonLock, updateDaemonInfo } from './daemon-lock.ts';
import { openDatabase } from './database.ts';
import { EngineLogs } from './engine-logs.ts';
import { secureHome } from './home-permissions.ts';
import { SessionLogs } from './session-logs.ts';
import { ensureToken } from './tokens.ts';

describe('file modes of the stores', () => {
  const dir = tempDirPerTest({ umask: 0o022 });

  it('creates every file 0600 and every folder 0700 under umask 022', async () => {
    const home = join(dir.path, 'home');
    mkdirSync(home, { mode: 0o700 });
    const logs = new SessionLogs(join(home, 'logs'), { fsyncBatchMs: 0, now: () => 1 });
    await logs.append('s1', { type: 'prompt', text: 'secret prompt' });
    const engine = new EngineLogs(join(home, 'engine'), { fsyncBatchMs: 0, now: () => 1, maxOpenLogs: 4 });
    engine.write('e1', { type: 'user', text: 'secret' });
    await engine.sync('e1');
    const artifacts = new ArtifactDir(join(home, 'work', '.switchboard'), { now: () => 1 });
    await artifacts.writeText('plan.md', 'the plan');
    await artifacts.append('log.jsonl', { type: 'phase' });
    await writeFileAtomic(join(home, 'deep', 'er', 'file.json'), '{}');
    await ensureLines(join(home, 'exclude'), ['.switchboard/*']);
    ensureToken(home);
    ensureToken(home, 'web.token');
    acquireDaemonLock(home, { pid: process.pid, startedAt: 1, version: 'test' });
    updateDaemonInfo(home, { pid: process.pid, startedAt: 1, version: 'test', url: 'http://x', port: 1 });
    const db = openDatabase(join(home, 'state.db'));
    db.exec("CREATE TABLE t (x TEXT); INSERT INTO t VALUES ('row')");
    const entries = modesUnder(home);
    await logs.closeAll();
    await engine.closeAll();
    await artifacts.close();
    releaseDaemonLock(home);
    db.close();
    for (const expected of [
      'logs/s1.jsonl',
      'engine/e1.jsonl',
      'work/.switchboard/plan.md',
      'state.db-wal',
      'state.db-shm',
      'daemon.json',
    ]) {
      assert.ok(
        entries.some((e) => e.path === expected),
        `${expected} exists`,
      );
    }
    assert.deepEqual(notOwnerOnly(entries), []);
  });

  it('tightens the .switchboard folder a worktree checkout brought, and keeps the mode of a file ensureLines edits', async () => {
    const folder = join(dir.path, '.switchboard');
    mkdirSync(folder, { mode: 0o755 });
    await new ArtifactDir(folder, { now: () => 1 }).writeText('plan.md', 'the plan');
    assert.deepEqual(notOwnerOnly(modesUnder(folder)), []);
    const exclude = join(dir.path, 'exclude');
    writeFileSync(exclude, '# git\n', { mode: 0o644 });
    await ensureLines(exclude, ['.switchboard/*']);
    assert.equal(modesUnder(dir.path).find((e) => e.path === 'exclude')?.mode, '644');
  });

  it('makes an existing 0755 home and what the daemon keeps in it owner-only, leaving config.json5 and symbolic links alone', () => {
    const home = join(dir.path, 'home');
    mkdirSync(join(home, 'logs', 'nested'), { recursive: true, mode: 0o755 });
    chmodSync(home, 0o755);
    writeFileSync(join(home, 'config.json5'), '{}', { mode: 0o644 });
    writeFileSync(join(home, 'logs', 'old.jsonl'), '', { mode: 0o644 });
    writeFileSync(join(home, 'logs', 'nested', 'deeper.jsonl'), '', { mode: 0o644 });
    writeFileSync(join(home, 'state.db'), '', { mode: 0o644 });
    writeFileSync(join(home, 'gateway.token'), 'x', { mode: 0o640 });
    writeFileSync(join(dir.path, 'elsewhere'), '', { mode: 0o644 });
    symlinkSync(join(dir.path, 'elsewhere'), join(home, 'logs', 'link.jsonl'));

    const changed = secureHome(home);
    assert.deepEqual(changed.sort(), [
      '.',
      'gateway.token',
      'logs',
      'logs/nested',
      'logs/nested/deeper.jsonl',
      'logs/old.jsonl',
      'state.db',
    ]);
    const entries = modesUnder(home);
    assert.deepEqual(notOwnerOnly(entries), [{ path: 'config.json5', kind: 'file', mode: '644' }]);
    assert.equal(modesUnder(dir.path).find((e) => e.path === 'elsewhere')?.mode, '644');
    assert.deepEqual(secureHome(home), [], 'a second pass has nothing left to do');
  });

  it('follows a home that is a symbolic link to a 0755 folder', () => {
    const real = join(dir.path, 'real');
    mkdirSync(real, { mode: 0o755 });
    symlinkSync(real, join(dir.path, 'home'));
    assert.deepEqual(secureHome(join(dir.path, 'home')), ['.']);
    assert.deepEqual(notOwnerOnly(modesUnder(real)), []);
  });

  it('creates a missing home 0700 and reports nothing tightened', () => {
    const home = join(dir.path, 'a', 'home');
    assert.deepEqual(secureHome(home), []);
    assert.deepEqual(notOwnerOnly(modesUnder(join(dir.path, 'a'))), []);
  });
});
