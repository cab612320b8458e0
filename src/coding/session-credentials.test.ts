import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { managerPerTestOn } from '../../test/support/manager-on-store.ts';
import { openTestStore } from '../../test/support/test-store.ts';

describe('a session that fails for want of credentials', () => {
  const { f } = managerPerTestOn((path) => openTestStore(path));

  it('says "Not logged in" and where the credentials go (harnesses.claude.env, or a Claude Code login)', async () => {
    const session = await f.manager.launch({ prompt: 'p', workdir: f.workdir, originChannel: 'cli' });
    await f.harness.last.emit(
      { type: 'started', backendSessionId: 'b' },
      {
        type: 'turnEnd',
        outcome: { ok: false, reason: 'api_error', message: 'Not logged in · Please run /login' },
        costUsd: 0,
      },
    );
    assert.equal(session.status, 'failed');
    const error = session.record.error ?? '';
    assert.match(
      error,
      /^Not logged in · Please run \/login — the claude agent has no usable credentials: set ANTHROPIC_API_KEY in harnesses\.claude\.env/,
    );
    assert.match(error, /~\/\.claude\/\.credentials\.json/);
    assert.equal((await f.manager.get(session.id)).error, error, 'the stored row says the same');
  });

  it('names the Codex key for a Codex session that exits unauthorized', async () => {
    const session = await f.manager.launch({ prompt: 'p', workdir: f.workdir, originChannel: 'cli', harness: 'codex' });
    await f.codex.last.emit(
      { type: 'started', backendSessionId: 'b' },
      { type: 'exited', code: 1, error: 'codex exited with code 1: unexpected status 401 Unauthorized' },
    );
    assert.match(
      session.record.error ?? '',
      /401 Unauthorized — the codex agent has no usable credentials: set OPENAI_API_KEY in harnesses\.codex\.env/,
    );
  });

  it('leaves other failures as the agent said them', async () => {
    const session = await f.manager.launch({ prompt: 'p', workdir: f.workdir, originChannel: 'cli' });
    await f.harness.last.emit(
      { type: 'started', backendSessionId: 'b' },
      { type: 'exited', code: 3, error: 'agent process exited with code 3' },
    );
    assert.equal(session.record.error, 'agent process exited with code 3');
  });
});
