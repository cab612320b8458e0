// The engine of a node that lost the `primary` lease while it stalled (declared down, its lease taken): its records are
// refused by the fence, and it neither answers "Internal error." for the turns it can no longer record nor runs the
// messages behind them. The new holder restores them from the database (a cut-off turn closed there, once). Its replies
// are sent fenced, so the reply of a turn under way when it stalled is not recorded in the outbox either.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import type { EngineFixture } from '../../test/support/engine-fixture.ts';
import { chatMessage, engineFixture } from '../../test/support/engine-fixture.ts';
import { RecordingOutbox } from '../../test/support/recording-outbox.ts';
import { Gate, ScriptedInference } from '../../test/support/scripted-inference.ts';
import { tempDir } from '../../test/support/temp-dir.ts';
import { ManualClock } from '../core/clock.ts';
import { loadConfig } from '../core/config-load.ts';
import { silentLogger } from '../core/logger.ts';
import { FencedError, leaseFence } from '../store/cluster-fence.ts';
import { LeaseStore } from '../store/cluster-leases.ts';
import { LogRecordStore, RecordMirror } from '../store/log-records.ts';
import { createEngine } from './create.ts';

describeEachDatabase('an engine whose records are fenced', (fresh) => {
  it('stops taking turns quietly once its lease is lost', async () => {
    const { db, dialect } = await fresh();
    const dir = tempDir('sb-fenced-');
    const { config } = loadConfig({ home: dir.path, env: {}, overrides: { engine: { stopGraceMs: 0 } } });
    const clock = new ManualClock();
    const leases = new LeaseStore(db);
    assert.equal(await leases.acquire('primary', { node: 'a', incarnation: 'a-1' }, 0, 1e12), true);
    const fence = leaseFence({ name: 'primary', node: 'a', incarnation: 'a-1', lock: dialect === 'postgres' });
    const records = new LogRecordStore(db, { notify: false, fence });
    const mirror = new RecordMirror({ store: records, logger: silentLogger(), clock, retryMs: 1000 });
    const gate = new Gate();
    const inference = new ScriptedInference().script(gate);
    const outbox = new RecordingOutbox();
    const logger = silentLogger();
    const engine = createEngine({ config, clock, logger, db, home: dir.path, inference, outbox, mirror });
    try {
      await engine.start();
      await engine.acceptUserMessage(chatMessage('id1', 'm1'));
      await engine.acceptUserMessage(chatMessage('id2', 'm2'));
      await gate.reached();

      // Declared down while the model thought: the taker ends a's leases and takes `primary`.
      await leases.releaseAllOf('a');
      assert.equal(await leases.acquire('primary', { node: 'b', incarnation: 'b-1' }, 1, 1e12), true);
      gate.release({ text: 'late' });
      await engine.idle();
      assert.ok(!outbox.sent.some((m) => m.text === 'Internal error.'), JSON.stringify(outbox.sent));
      assert.equal(inference.requests.length, 1, 'm2 is left to the new holder');
      const held = await new LogRecordStore(db, { notify: false }).read('engine', engine.listSessions()[0]?.id ?? '');
      assert.ok(!held.some((r) => r.type === 'turn_end'), 'no turn closed from the stale run');
    } finally {
      await engine.stop().catch(() => undefined);
      await mirror.close();
      dir.remove();
    }
  });
});

let fx: EngineFixture | null = null;
afterEach(async () => {
  await fx?.close();
  fx = null;
});

describe('an engine whose replies are refused by the fence', { timeout: 30_000 }, () => {
  it('answers while held; once fenced, neither its reply nor an "Internal error." goes out', async () => {
    fx = await engineFixture();
    await fx.engine.acceptUserMessage(chatMessage('m1', 'hello', '42', '42'));
    await fx.engine.idle();
    assert.deepEqual(fx.outbox.to('telegram|42'), ['echo: hello'], 'the reply goes out while the lease is held');
    fx.outbox.refuseFenced = new FencedError('primary', 'a');
    await fx.engine.acceptUserMessage(chatMessage('m2', 'again', '42', '42'));
    await fx.engine.idle();
    assert.deepEqual(fx.outbox.to('telegram|42'), ['echo: hello'], 'nothing more from the stale holder');
    assert.ok(!fx.logs.some((l) => l.msg === 'engine turn failed'), 'not reported as an engine fault');
  });
});
