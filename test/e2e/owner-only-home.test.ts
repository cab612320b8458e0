// The real daemon process on a home the user made first (0755, config.json5 0644, a 0644 log from an older version),
// under umask 022: after a session ran, every file under the home is 0600 and every folder 0700 — except config.json5,
// which is the user's (doctor warns about it) — and the start-up log says what was tightened.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { DaemonProcess } from '../support/daemon-process.ts';
import { killDaemonProcess, startDaemonProcess } from '../support/daemon-process.ts';
import { logLines } from '../support/e2e-daemon.ts';
import { modesUnder, notOwnerOnly } from '../support/file-modes.ts';
import { tempDir } from '../support/temp-dir.ts';
import { waitFor } from '../support/wait-for.ts';

const FAKE_CLAUDE = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));

describe('the daemon keeps its state directory owner-only', () => {
  const dir = tempDir('sb-modes-');
  const home = join(dir.path, 'home');
  const workdir = join(dir.path, 'work');
  let daemon: DaemonProcess | undefined;
  let umask = 0;

  before(() => {
    umask = process.umask(0o022);
    mkdirSync(join(home, 'logs'), { recursive: true, mode: 0o755 });
    chmodSync(home, 0o755);
    mkdirSync(workdir, { recursive: true });
    writeFileSync(join(home, 'logs', 'older.jsonl'), '', { mode: 0o644 });
    const config = {
      workspaces: [dir.path],
      log: { level: 'info' },
      harnesses: { claude: { executable: FAKE_CLAUDE } },
    };
    writeFileSync(join(home, 'config.json5'), JSON.stringify(config), { mode: 0o644 });
  });

  after(async () => {
    await killDaemonProcess(daemon);
    process.umask(umask);
    dir.remove();
  });

  it('tightens a pre-existing 0755 home on start, logs it, and creates every file 0600 and folder 0700', async () => {
    daemon = await startDaemonProcess(home);
    await daemon.rpc('sessions.launch', { prompt: 'the secret prompt', workdir, name: 'private' });
    await waitFor('the session to answer', async () => {
      const out = await daemon?.rpc<{ lines: string[] }>('sessions.output', { session: 'private', full: true });
      return out && out.lines.length > 0 ? out : undefined;
    });
    const running = modesUnder(home);
    daemon.child.kill('SIGTERM');
    const stopped = await daemon.exited();
    assert.equal(stopped.code, 0, daemon.output());

    const tightened = logLines(daemon.output()).find((l) =>
      String(l.msg).startsWith('made the state directory owner-only'),
    );
    assert.ok(tightened, `the start-up log says what was tightened:\n${daemon.output()}`);
    assert.deepEqual(tightened.paths, ['.', 'logs', 'logs/older.jsonl']);

    for (const expected of [
      'logs',
      'engine',
      'state.db',
      'state.db-wal',
      'state.db-shm',
      'gateway.token',
      'daemon.json',
    ]) {
      assert.ok(
        running.some((e) => e.path === expected),
        `${expected} exists while the daemon runs`,
      );
    }
    assert.ok(
      running.some((e) => e.path.startsWith('logs/') && e.path !== 'logs/older.jsonl'),
      'the session has a log',
    );
    const userFile = { path: 'config.json5', kind: 'file', mode: '644' };
    assert.deepEqual(notOwnerOnly(running), [userFile]);
    assert.deepEqual(notOwnerOnly(modesUnder(home)), [userFile]);
  });
});
