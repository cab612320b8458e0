// A Telegram bot (the real connector, on the fake Bot API) registered on a durable outbox over a real SQLite file: the
// rig of the tests that deliver to Telegram through the outbox.
import { join } from 'node:path';
import type { DurableOutbox } from '../../src/channels/outbox.ts';
import { createOutbox } from '../../src/channels/outbox.ts';
import type { TelegramConnector } from '../../src/channels/telegram/telegram-connector.ts';
import { createTelegramConnector } from '../../src/channels/telegram/telegram-connector.ts';
import { ManualClock } from '../../src/core/clock.ts';
import { outboxSchema, telegramChannelSchema } from '../../src/core/config-channels.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { openDatabase } from '../../src/store/database.ts';
import { sqliteKysely } from '../../src/store/kysely/connection.ts';
import type { FakeTelegram } from './fake-telegram.ts';
import { FAKE_BOT_TOKEN, startFakeTelegram } from './fake-telegram.ts';
import { tempDir } from './temp-dir.ts';

/** The started rig; `close` stops everything and removes its files. */
export interface TelegramOutboxRig {
  fake: FakeTelegram;
  clock: ManualClock;
  outbox: DurableOutbox;
  bot: TelegramConnector;
  close(): Promise<void>;
}

/** Starts the fake Bot API, a bot answering `owner` only, and a started outbox delivering through it (no jitter). */
export async function telegramOutboxRig(prefix: string, owner: number): Promise<TelegramOutboxRig> {
  const fake = await startFakeTelegram();
  const dir = tempDir(prefix);
  const db = openDatabase(join(dir.path, 'state.db'));
  const clock = new ManualClock();
  const config = telegramChannelSchema.parse({
    enabled: true,
    botToken: FAKE_BOT_TOKEN,
    apiRoot: fake.url,
    allowedUserIds: [owner],
  });
  const bot = createTelegramConnector(config, { clock, logger: silentLogger(), env: {} });
  const outbox = createOutbox({
    db: sqliteKysely(db),
    clock,
    logger: silentLogger(),
    config: outboxSchema.parse({}),
    random: () => 0,
  });
  outbox.register(bot);
  await outbox.start();
  return {
    fake,
    clock,
    outbox,
    bot,
    async close() {
      await outbox.stop();
      await bot.stop();
      db.close();
      dir.remove();
      await fake.close();
    },
  };
}
