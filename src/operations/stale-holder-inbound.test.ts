// A stalled `primary` holder that resumes may receive from its Telegram poller the same updates the new holder
// received. Both hand them to the connectors' inbound handler; each update must be stored and answered once. A typed
// message is accepted by the one engine that serves (the stale node no longer holds the lease, so its RoutedEngine
// sends the call to the holder), whose inbox de-duplicates by the message id Telegram's update gives
// (`<chat>:<message_id>`); a command is recorded once in `inbound_commands` (by channel and that id), and its answer
// is one keyed outbox row. On a real PostgreSQL, the two holders on two pools of one database.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { EngineFixture } from '../../test/support/engine-fixture.ts';
import { engineFixture } from '../../test/support/engine-fixture.ts';
import { postgresSkip } from '../../test/support/postgres.ts';
import { PostgresDatabases } from '../../test/support/test-store.ts';
import { waitFor } from '../../test/support/wait-for.ts';
import type { InboundHandler, InboundMessage } from '../channels/connector.ts';
import { createOutbox } from '../channels/outbox.ts';
import type { TelegramMessage } from '../channels/telegram/telegram-inbound.ts';
import { toInbound } from '../channels/telegram/telegram-inbound.ts';
import { systemClock } from '../core/clock.ts';
import { silentLogger } from '../core/logger.ts';
import { EngineCallWorker, RoutedEngine } from '../engine/routed-engine.ts';
import { EngineCallStore } from '../store/engine-calls.ts';
import { InboundCommandStore } from '../store/inbound-commands.ts';
import type { Database } from '../store/tables/index.ts';
import { createInboundHandler } from './inbound.ts';
import type { Operation } from './operation.ts';
import { defineOperation } from './operation.ts';

/** One Telegram update's message from user 42 in its private chat, as both pollers receive it. */
function update(messageId: number, text: string): InboundMessage {
  const message = {
    message_id: messageId,
    date: 1_700_000_000,
    chat: { id: 42, type: 'private', first_name: 'Ann' },
    from: { id: 42, is_bot: false, first_name: 'Ann' },
    text,
  } as TelegramMessage;
  const inbound = toInbound(message);
  if (!inbound) throw new Error('not a text message');
  return inbound;
}

describe('a stale primary holder receiving the updates the new holder received', { skip: postgresSkip() }, () => {
  const databases = new PostgresDatabases();
  const opened: Kysely<Database>[] = [];
  let fixture: EngineFixture | undefined;
  let worker: EngineCallWorker | undefined;
  /** Runs of the test command. */
  let pings = 0;
  let fresh: InboundHandler;
  let stale: InboundHandler;
  let holderDb: Kysely<Database>;

  const ping: Operation = defineOperation({
    name: 'ping',
    summary: 'Counts its runs',
    input: z.strictObject({}),
    expose: { command: { name: 'ping', positional: [], usage: '/ping' } },
    async run() {
      pings += 1;
      return { pings };
    },
    format: (r) => `pong ${r.pings}`,
  });

  before(async () => {
    // Two pools on one database: the new holder's and the stale one's (two processes of the cluster).
    holderDb = await databases.open('stale_holder');
    const staleDb = await databases.open('stale_holder');
    opened.push(holderDb, staleDb);
    const db = holderDb;
    fixture = await engineFixture({ open: () => ({ db, dialect: 'postgres', close: async () => undefined }) });
    const { engine, config, clock: engineClock } = fixture;
    const clock = systemClock();
    const logger = silentLogger();
    worker = new EngineCallWorker({
      engine,
      calls: new EngineCallStore(holderDb, { notify: false }),
      notices: null,
      holder: 'new-holder',
      clock,
      logger,
      pollMs: 10,
    });
    await worker.start();
    const holder = (kysely: Kysely<Database>, serves: boolean): InboundHandler =>
      createInboundHandler({
        ops: [ping],
        // The test command uses no service: the SessionManager is never reached.
        services: { config, sessions: null as never, clock: engineClock },
        engine: new RoutedEngine({
          local: engine,
          servesEngine: () => serves,
          calls: new EngineCallStore(kysely, { notify: false }),
          notices: null,
          clock,
          pollMs: 10,
          timeoutMs: 20_000,
        }),
        outbox: createOutbox({ db: kysely, config: config.channels.outbox, clock, logger }),
        logger,
        commands: new InboundCommandStore(kysely),
      });
    fresh = holder(holderDb, true);
    // Resumed after the others took `primary` over: its lease is gone, so it does not serve the engine.
    stale = holder(staleDb, false);
  });

  after(async () => {
    await worker?.stop();
    await fixture?.close();
    await Promise.all(opened.map((db) => db.destroy()));
    await databases.stop();
  });

  it('stores a typed message once, whichever holder hands it over first and however often', async () => {
    if (!fixture) throw new Error('no fixture');
    const hello = update(7, 'hello');
    await Promise.all([fresh(hello), stale(hello), stale(hello), fresh(hello)]);
    const sessionId = fixture.engine.listSessions()[0]?.id;
    assert.ok(sessionId, 'the person has an engine session');
    const incoming = fixture.records(sessionId).filter((r) => r.type === 'incoming');
    assert.deepEqual(
      incoming.map((r) => r.messageId),
      ['42:7'],
      'one incoming record for the update',
    );
    // A later update from the stale holder only is still taken (through the holder's engine).
    await stale(update(8, 'again'));
    await waitFor('the second message on disk', () =>
      fixture?.records(sessionId).some((r) => r.type === 'incoming' && r.messageId === '42:8'),
    );
    assert.equal(fixture.records(sessionId).filter((r) => r.type === 'incoming').length, 2);
  });

  it('runs and answers a command once, handed over by both holders', async () => {
    const command = update(9, '/ping');
    await fresh(command);
    await stale(command);
    const again = update(10, '/ping');
    await Promise.all([stale(again), fresh(again)]);
    assert.equal(pings, 2, 'each command ran once');
    const rows = await holderDb
      .selectFrom('outbox_messages')
      .select(['dedupe_key', 'text'])
      .where('target_key', '=', 'telegram|42')
      .orderBy('id')
      .execute();
    assert.deepEqual(
      rows.map((r) => r.dedupe_key),
      ['command-telegram|42-42:9', 'command-telegram|42-42:10'],
      'one answer per command',
    );
    assert.equal(rows[0]?.text, 'pong 1', 'handed over one after the other: the second holder found it done');
  });
});
