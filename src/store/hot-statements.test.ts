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
        db.insertInto('linear_effects').values({ key: slot<string>(1), state: 'pending', created_at: slot<number>(0), updated_at: slot<number>(0) }).returning(['key', 'state', 'created_at']),
      );
    assert.deepEqual((await insert('a', 10)).map((r) => ({ ...r })), [{ key: 'a', state: 'pending', created_at: 10 }]);
    assert.deepEqual((await insert('b', 20)).map((r) => ({ ...r })), [{ key: 'b', state: 'pending', created_at: 20 }], 'the second call binds its own values');
    const done = (keys: string[], at: number) =>
      hot.rows(db, `done:${keys.length}`, [at, ...keys], (slot) =>
        db
          .updateTable('linear_effects')
          .set({ state: 'done', updated_at: slot<number>(0) })
          .where('key', 'in', keys.map((_, i) => slot<string>(i + 1)))
          .returning(['key', 'updated_at']),
      );
    assert.deepEqual((await done(['a', 'b'], 30)).map((r) => r.key).sort(), ['a', 'b']);
    const rows = await db.selectFrom('linear_effects').select(['key', 'state', 'updated_at']).orderBy('key').execute();
    assert.deepEqual(rows.map((r) => ({ ...r })), [{ key: 'a', state: 'done', updated_at: 30 }, { key: 'b', state: 'done', updated_at: 30 }]);
  });
});
