import assert from 'node:assert/strict';
import { closeSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tempDirPerTest } from '../../test/support/temp-dir.ts';
import {
  enforceMode,
  ensurePrivateDir,
  makePrivateDirs,
  openPrivate,
  openPrivateAsync,
  touchPrivateFile,
  writePrivateFile,
} from './private-files.ts';

function mode(path: string): string {
  return (statSync(path).mode & 0o777).toString(8);
}

describe('private files', () => {
  const dir = tempDirPerTest({ umask: 0o022 });

  it('creates folders 0700 and files 0600 under umask 022', async () => {
    ensurePrivateDir(join(dir.path, 'a', 'b'));
    makePrivateDirs(join(dir.path, 'c'));
    closeSync(openPrivate(join(dir.path, 'a', 'b', 'log.jsonl'), 'a+'));
    writePrivateFile(join(dir.path, 'c', 'token'), 'x');
    touchPrivateFile(join(dir.path, 'c', 'db'));
    await (await openPrivateAsync(join(dir.path, 'c', 'tmp'), 'wx')).close();
    for (const path of ['a', 'a/b', 'c']) assert.equal(mode(join(dir.path, path)), '700', path);
    for (const path of ['a/b/log.jsonl', 'c/token', 'c/db', 'c/tmp'])
      assert.equal(mode(join(dir.path, path)), '600', path);
  });

  it('keeps the intended modes when the umask would narrow them (umask 277)', async () => {
    process.umask(0o277);
    ensurePrivateDir(join(dir.path, 'x', 'y'));
    writePrivateFile(join(dir.path, 'x', 'y', 'f'), 'data');
    await (await openPrivateAsync(join(dir.path, 'x', 'g'), 'w')).close();
    assert.equal(mode(join(dir.path, 'x')), '700');
    assert.equal(mode(join(dir.path, 'x', 'y')), '700');
    assert.equal(mode(join(dir.path, 'x', 'y', 'f')), '600');
    assert.equal(mode(join(dir.path, 'x', 'g')), '600');
  });

  it('chmods only the folders it created when given a relative path through .., never the working directory', () => {
    const cwd = process.cwd();
    const work = join(dir.path, 'cwd');
    mkdirSync(work, { mode: 0o755 });
    process.chdir(work);
    try {
      process.umask(0o277);
      assert.equal(makePrivateDirs('q/../rel/inner/'), true);
    } finally {
      process.chdir(cwd);
    }
    assert.equal(mode(work), '755');
    assert.equal(existsSync(join(work, 'q')), false);
    assert.equal(mode(join(work, 'rel')), '700');
    assert.equal(mode(join(work, 'rel', 'inner')), '700');
  });

  it('tightens an existing 0644 file it opens and an existing 0755 folder it ensures; makePrivateDirs leaves existing folders', () => {
    const file = join(dir.path, 'old.jsonl');
    writeFileSync(file, '', { mode: 0o644 });
    closeSync(openPrivate(file, 'a+'));
    assert.equal(mode(file), '600');
    const owned = join(dir.path, 'logs');
    const foreign = join(dir.path, 'info');
    mkdirSync(owned, { mode: 0o755 });
    mkdirSync(foreign, { mode: 0o755 });
    ensurePrivateDir(owned);
    assert.equal(makePrivateDirs(foreign), false);
    assert.equal(mode(owned), '700');
    assert.equal(mode(foreign), '755');
    assert.equal(enforceMode(join(dir.path, 'missing'), 0o600), false);
    assert.equal(enforceMode(owned, 0o700), false);
  });
});
