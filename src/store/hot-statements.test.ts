import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { HotStatements } from './hot-statements.ts';

describeEachDatabase('HotStatements', (fresh) => {
  it('binds each call’s values where the builder put their slots, keeps the builder’s constants, and reuses the text', async () => {
    const { db } = await fresh();
    const hot = new HotStatements();
    const insert = (key: string, at: number) =>
      hot.rows(db, 'effect', [at, key], (slot) =>
        db
          .insertInto('linear_effects')
          .values({ key: slot<string>(1), state: 'pending', created_at: slot<number>(0), updated_at: slot<number>(0) })
          .returning(['key', 'state', 'created_at']),
      );
    assert.deepEqual(
      (await insert('a', 10)).map((r) => ({ ...r })),
      [{ key: 'a', state: 'pending', created_at: 10 }],
    );
    assert.deepEqual(
      (await insert('b', 20)).map((r) => ({ ...r })),
      [{ key: 'b', state: 'pending', created_at: 20 }],
      'the second call binds its own values',
    );
    const done = (keys: string[], at: number) =>
      hot.rows(db, `done:${keys.length}`, [at, ...keys], (slot) =>
        db
          .updateTable('linear_effects')
          .set({ state: 'done', updated_at: slot<number>(0) })
          .where(
            'key',
            'in',
            keys.map((_, i) => slot<string>(i + 1)),
          )
          .returning(['key', 'updated_at']),
      );
    assert.deepEqual((await done(['a', 'b'], 30)).map((r) => r.key).sort(), ['a', 'b']);
    const rows = await db.selectFrom('linear_effects').select(['key', 'state', 'updated_at']).orderBy('key').execute();
    assert.deepEqual(
      rows.map((r) => ({ ...r })),
      [
        { key: 'a', state: 'done', updated_at: 30 },
        { key: 'b', state: 'done', updated_at: 30 },
      ],
    );
  });

  it('binds the values whatever order the SQL holds their slots in, and refuses a slot left out or a call of another length', async () => {
    const { db } = await fresh();
    const hot = new HotStatements();
    const insert = (m: { sessionId: string; messageId: string; seq: number }) =>
      hot.execute(db, 'message', [m.seq, m.messageId, m.sessionId], (slot) =>
        db
          .insertInto('engine_message_ids')
          .values({ session_id: slot<string>(2), message_id: slot<string>(1), seq: slot<number>(0) })
          .onConflict((oc) => oc.columns(['session_id', 'message_id']).doNothing()),
      );
    await insert({ sessionId: 'a', messageId: 'x', seq: 7 });
    await insert({ sessionId: 'a', messageId: 'y', seq: 8 });
    await insert({ sessionId: 'a', messageId: 'x', seq: 9 });
    const rows = await db
      .selectFrom('engine_message_ids')
      .select(['session_id', 'message_id', 'seq'])
      .orderBy('message_id')
      .execute();
    assert.deepEqual(
      rows.map((r) => ({ ...r })),
      [
        { session_id: 'a', message_id: 'x', seq: 7 },
        { session_id: 'a', message_id: 'y', seq: 8 },
      ],
    );
    await assert.rejects(
      hot.execute(db, 'message', ['a', 'z'], () => assert.fail('a known shape is not built again')),
      /2 values for 3 slots/,
    );
    await assert.rejects(
      hot.rows(db, 'lookup', ['a', 'x'], (slot) =>
        db.selectFrom('engine_message_ids').selectAll().where('session_id', '=', slot<string>(0)),
      ),
      /slot 1 of 2 is not among the parameters/,
    );
  });
});
