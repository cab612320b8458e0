// waitForCodeRun over a real SessionManager, the fake Claude and a real SQLite file, seen from a node that does not run
// the session: there the row is committed by the node running it, after the records that end the wait.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sessionManagerIn } from '../../test/support/session-manager-in.ts';
import { tempDir } from '../../test/support/temp-dir.ts';
import { systemClock } from '../core/clock.ts';
import { loadConfig } from '../core/config-load.ts';
import { silentLogger } from '../core/logger.ts';
import type { DatabaseSync } from '../store/database.ts';
import type { CodeRunWaitDeps } from './code-run-wait.ts';
import { waitForCodeRun } from './code-run-wait.ts';
import type { SessionManager } from './session-manager.ts';

const fakeClaude = fileURLToPath(new URL('../../test/support/fake-claude.mjs', import.meta.url));

describe('waitForCodeRun', () => {
  const dir = tempDir('sb-coderun-wait-');
  let db: DatabaseSync;
  let manager: SessionManager;

  before(() => {
    const work = join(dir.path, 'work');
    mkdirSync(work, { recursive: true });
    const { config } = loadConfig({
      home: dir.path,
      env: {},
      overrides: {
        workspaces: [dir.path],
        defaultWorkdir: work,
        'harnesses.claude.executable': fakeClaude,
        'harnesses.claude.settingSources': ['project'],
      },
    });
    ({ db, manager } = sessionManagerIn(dir.path, config, systemClock()));
  });
  after(async () => {
    await manager.stop();
    db.close();
    dir.remove();
  });

  it("answers the ended row even when the running node commits it after the session's final records", async () => {
    const session = await manager.launch({ prompt: 'say hi', originChannel: 'test', multiTurn: false });
    // As another node sees it: not live here, and the row still says `running` for a while after the records ended.
    let committed = false;
    const remote: CodeRunWaitDeps['sessions'] = {
      follow: (id, from, listener) => manager.follow(id, from, listener),
      liveById: () => undefined,
      get: async (id) => {
        const row = await manager.get(id);
        return committed ? row : { ...row, status: 'running' };
      },
    };
    const deps: CodeRunWaitDeps = {
      sessions: remote,
      clock: systemClock(),
      logger: silentLogger(),
      processGoneMs: 10_000,
      pollMs: 60_000,
    };
    const wait = waitForCodeRun(deps, session.id, async () => assert.fail('nothing to kill'));
    const ended = await new Promise<boolean>((resolve) => {
      const unfollow = manager.follow(session.id, 1, (record) => {
        if (record.type === 'status' && record.status === 'completed') {
          unfollow();
          resolve(true);
        }
      });
    });
    assert.equal(ended, true);
    setTimeout(() => {
      committed = true;
    }, 300);
    const end = await wait;
    assert.equal(end.record.status, 'completed');
    assert.equal(end.exitCode, 0);
    assert.equal(end.stopped, false);
  });
});
