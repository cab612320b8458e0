// A Telegram bot (the real connector, on the fake Bot API) registered on a durable outbox over a real SQLite file (or
// the test's database, through `open`): the rig of the tests that deliver to Telegram through the outbox.
import { join } from 'node:path';
import type { DurableOutbox } from '../../src/channels/outbox.ts';
import { createOutbox } from '../../src/channels/outbox.ts';
import type { TelegramConnector } from '../../src/channels/telegram/telegram-connector.ts';
import { createTelegramConnector } from '../../src/channels/telegram/telegram-connector.ts';
import { ManualClock } from '../../src/core/clock.ts';
import { outboxSchema, telegramChannelSchema } from '../../src/core/config-channels.ts';
import { silentLogger } from '../../src/core/logger.ts';
import type { FakeTelegram } from './fake-telegram.ts';
import { FAKE_BOT_TOKEN, startFakeTelegram } from './fake-telegram.ts';
import { tempDir } from './temp-dir.ts';
import type { OpenStore } from './test-store.ts';
import { openSqliteStore } from './test-store.ts';

/** The started rig; `close` stops everything and removes its files. */
export interface TelegramOutboxRig {
  fake: FakeTelegram;
  clock: ManualClock;
  outbox: DurableOutbox;
  bot: TelegramConnector;
  close(): Promise<void>;
}

/**
 * Starts the fake Bot API, a bot answering `owner` only, and a started outbox delivering through it (no jitter), over
 * `open(<temp dir>/state.db)` (default a SQLite file).
 */
export async function telegramOutboxRig(
  prefix: string,
  owner: number,
  open: OpenStore = openSqliteStore,
): Promise<TelegramOutboxRig> {
  const fake = await startFakeTelegram();
  const dir = tempDir(prefix);
  const db = await open(join(dir.path, 'state.db'));
  const clock = new ManualClock();
  const config = telegramChannelSchema.parse({
    enabled: true,
    botToken: FAKE_BOT_TOKEN,
    apiRoot: fake.url,
    allowedUserIds: [owner],
  });
  const bot = createTelegramConnector(config, { clock, logger: silentLogger(), env: {} });
  const outbox = createOutbox({
    db: db.db,
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
      await db.close();
      dir.remove();
      await fake.close();
    },
  };
}
