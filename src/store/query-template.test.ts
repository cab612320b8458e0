import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openDatabase } from './database.ts';
import { sqliteKysely } from './kysely/connection.ts';
import { QueryTemplate } from './query-template.ts';

describe('QueryTemplate', () => {
  it('runs a query compiled once with new values, and refuses placeholders the compiled query does not hold in order', async () => {
    const db = sqliteKysely(openDatabase(':memory:'));
    const insert = new QueryTemplate(db.insertInto('engine_message_ids').values({ session_id: 's', message_id: 'm', seq: 1 }).compile(), ['s', 'm', 1]);
    await db.executeQuery(insert.bind(['a', 'x', 7]));
    await db.executeQuery(insert.bind(['a', 'y', 8]));
    const rows = await db.selectFrom('engine_message_ids').select(['message_id', 'seq']).orderBy('message_id').execute();
    assert.deepEqual(rows.map((r) => ({ ...r })), [{ message_id: 'x', seq: 7 }, { message_id: 'y', seq: 8 }]);
    assert.throws(() => insert.bind(['a', 'z']), /2 values for 3 parameters/);
    const compiled = db.selectFrom('engine_message_ids').selectAll().where('session_id', '=', 'p').where('message_id', '=', 'q').compile();
    assert.throws(() => new QueryTemplate(compiled, ['q', 'p']), /not the placeholders in order/);
    assert.throws(() => new QueryTemplate(compiled, ['p', 'p']), /must be distinct/);
  });
});
