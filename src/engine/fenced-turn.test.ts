// The engine of a node that lost the `primary` lease while it stalled (declared down, its lease taken): its records are
// refused by the fence, and it neither answers "Internal error." for the turns it can no longer record nor runs the
// messages behind them. The new holder restores them from the database (a cut-off turn closed there, once).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { chatMessage } from '../../test/support/engine-fixture.ts';
import { RecordingOutbox } from '../../test/support/recording-outbox.ts';
import { Gate, ScriptedInference } from '../../test/support/scripted-inference.ts';
import { tempDir } from '../../test/support/temp-dir.ts';
import { ManualClock } from '../core/clock.ts';
import { loadConfig } from '../core/config-load.ts';
import { silentLogger } from '../core/logger.ts';
import { leaseFence } from '../store/cluster-fence.ts';
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
