import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { dispatchRecord } from '../../../test/support/dispatch-record.ts';
import { initRepo } from '../../../test/support/git-repo.ts';
import { tempDir } from '../../../test/support/temp-dir.ts';
import { linearPipelineSchema } from '../../core/config-linear-pipeline.ts';
import { KeyedSerial } from '../../core/keyed-serial.ts';
import { silentLogger } from '../../core/logger.ts';
import { prepareWorktree } from './dispatch-setup.ts';

describe('prepareWorktree', () => {
  it("makes one repository's worktrees one at a time (git fails on a worktree another add is still writing)", async () => {
    const dir = tempDir('sb-setup-');
    try {
      const repo = initRepo(join(dir.path, 'repo'));
      // The pipeline's queue per repository, watched: what runs under each key, and whether two ever overlap.
      const serial = new KeyedSerial<string>();
      const keys: string[] = [];
      let running = 0;
      let overlapped = false;
      const repositories = {
        run: <T>(key: string, work: () => Promise<T>): Promise<T> =>
          serial.run(key, async () => {
            keys.push(key);
            running += 1;
            overlapped ||= running > 1;
            try {
              return await work();
            } finally {
              running -= 1;
            }
          }),
      };
      const p = { pc: linearPipelineSchema.parse({}), logger: silentLogger(), repositories };
      const dispatches = ['A', 'B', 'C', 'D', 'E', 'F'].map((id) =>
        dispatchRecord({ id: `d-${id}`, repoPath: repo, branch: `agent/eng-${id.toLowerCase()}` }),
      );
      const worktrees = await Promise.all(dispatches.map((d) => prepareWorktree(p, d)));
      assert.deepEqual(keys, Array(6).fill(resolve(repo)), 'every worktree change went through the repository queue');
      assert.equal(overlapped, false);
      for (const w of worktrees) assert.ok(existsSync(join(w.path, '.git')), w.path);
    } finally {
      dir.remove();
    }
  });
});
