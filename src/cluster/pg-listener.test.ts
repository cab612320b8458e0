import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { TestPostgres } from '../../test/support/postgres.ts';
import { postgresSkip, startPostgres } from '../../test/support/postgres.ts';
import { waitFor } from '../../test/support/wait-for.ts';
import { systemClock } from '../core/clock.ts';
import { silentLogger } from '../core/logger.ts';
import { openPostgres } from '../store/kysely/postgres.ts';
import { PgListener } from './pg-listener.ts';

describe('the LISTEN connection', { skip: postgresSkip() }, () => {
  let pg: TestPostgres | undefined;

  before(async () => {
    pg = await startPostgres();
  });

  after(async () => {
    await pg?.stop();
  });

  it('hands notifications to the subscribers of their channel, and reconnects after its connection is killed', async () => {
    if (!pg) throw new Error('no PostgreSQL');
    const db = openPostgres({ url: pg.url, maxConnections: 2 });
    const listener = new PgListener({
      url: pg.url,
      channels: ['sb_test_a', 'sb_test_b'],
      clock: systemClock(),
      logger: silentLogger(),
      reconnectMs: 20,
    });
    const got: string[] = [];
    let connects = 0;
    listener.on('sb_test_a', (payload) => got.push(`a:${payload}`));
    listener.onConnect(() => (connects += 1));
    assert.throws(() => listener.on('elsewhere', () => undefined), /not a channel/);
    try {
      await listener.start();
      assert.equal(listener.connected, true);
      await sql`SELECT pg_notify('sb_test_a', 'one'), pg_notify('sb_test_b', 'ignored')`.execute(db);
      await waitFor('the first notification', () => got.includes('a:one'), 10_000);

      // The server ends the LISTEN session: the listener reconnects, tells its subscribers, and listens again.
      await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND pid <> pg_backend_pid()`.execute(
        db,
      );
      await waitFor('the reconnection', () => connects >= 2 && listener.connected, 10_000);
      await sql`SELECT pg_notify('sb_test_a', 'two')`.execute(db);
      await waitFor('a notification after the reconnection', () => got.includes('a:two'), 10_000);
      assert.deepEqual(got, ['a:one', 'a:two']);
    } finally {
      await listener.stop();
      await db.destroy();
    }
  });
});
