import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { managerPerTest } from '../../test/support/manager-fixture.ts';

describe('SessionManager.send', () => {
  const { f } = managerPerTest();

  it('resolves only once the message is durable in the session log (a crash after the answer cannot lose it)', async () => {
    const session = await f.manager.launch({ prompt: 'p', workdir: f.workdir, originChannel: 'cli' });
    await f.harness.last.emit(
      { type: 'started', backendSessionId: 'b' },
      { type: 'turnEnd', outcome: { ok: true }, costUsd: 0.01 },
    );
    // Which records each sync of this session's log covered, and whether it had finished when send resolved.
    const synced: { last: string; done: boolean }[] = [];
    const sync = f.logs.sync.bind(f.logs);
    f.logs.sync = async (id: string) => {
      const call = { last: JSON.stringify(f.logs.read(id).at(-1)), done: false };
      if (id === session.id) synced.push(call);
      await sync(id);
      call.done = true;
    };
    await f.manager.send(session.id, 'now the docs', { source: 'user' });
    const covering = synced.filter((c) => c.done && c.last.includes('now the docs'));
    assert.equal(covering.length, 1, `a finished sync covered the message: ${JSON.stringify(synced)}`);
  });
});
