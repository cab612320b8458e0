// What a node of a cluster on PostgreSQL adds to the logs: the write-through of every log record to `log_records`
// (RecordMirror), and the node's one LISTEN connection for the notifications of new records, outbox messages, wake
// events, engine calls, queued launches, commands for a node, Linear dispatches, web chat changes and webhook
// deliveries. Absent on SQLite.
import type { Kysely } from 'kysely';
import type { Clock } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import { COMMAND_CHANNEL, COMMAND_DONE_CHANNEL } from '../store/cluster-commands.ts';
import type { WriteFence } from '../store/cluster-fence.ts';
import { LINEAR_DISPATCH_CHANNEL } from '../store/cluster-migrations.ts';
import { ENGINE_CALLS_CHANNEL, ENGINE_RESULTS_CHANNEL } from '../store/engine-calls.ts';
import { LAUNCH_CHANNEL } from '../store/launch-queue.ts';
import { LogRecordStore, RecordMirror, RECORDS_CHANNEL } from '../store/log-records.ts';
import type { Database } from '../store/tables/index.ts';
import { WEB_CHANGES_CHANNEL } from '../store/web-transcript.ts';
import { PgListener } from './pg-listener.ts';
import { OUTBOX_CHANNEL, WAKE_CHANNEL } from './primary.ts';
import { WEBHOOKS_CHANNEL } from './webhook-wakeups.ts';

/** The records' table, its write-through and the LISTEN connection of a node. */
export interface ClusterRecords {
  store: LogRecordStore;
  mirror: RecordMirror;
  /**
   * The engine's write-through: its own queue and store, whose commits are fenced by `engineFence` (the `primary`
   * lease), so a stale holder's records are refused (and dropped) rather than overwrite the new holder's.
   */
  engineMirror: RecordMirror;
  listener: PgListener;
  /** Commits what the mirror still holds and closes the LISTEN connection. */
  close(): Promise<void>;
}

/** Opens them over the database `db` at `url`; resolves once the LISTEN connection was tried (it retries by itself). */
export async function openClusterRecords(options: {
  url: string;
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  /** Wait before a failed commit or a broken LISTEN connection is tried again. */
  retryMs: number;
  /** Checked in each commit of the engine's records (store/cluster-fence.ts `leaseFence` of `primary`). */
  engineFence: WriteFence;
}): Promise<ClusterRecords> {
  const { url, db, clock, logger, retryMs } = options;
  const store = new LogRecordStore(db, { notify: true });
  const mirror = new RecordMirror({ store, logger, clock, retryMs });
  const engineStore = new LogRecordStore(db, { notify: true, fence: options.engineFence });
  const engineMirror = new RecordMirror({ store: engineStore, logger, clock, retryMs });
  const listener = new PgListener({
    url,
    channels: [
      RECORDS_CHANNEL,
      OUTBOX_CHANNEL,
      WAKE_CHANNEL,
      ENGINE_CALLS_CHANNEL,
      ENGINE_RESULTS_CHANNEL,
      LAUNCH_CHANNEL,
      COMMAND_CHANNEL,
      COMMAND_DONE_CHANNEL,
      LINEAR_DISPATCH_CHANNEL,
      WEB_CHANGES_CHANNEL,
      WEBHOOKS_CHANNEL,
    ],
    clock,
    logger,
    reconnectMs: retryMs,
  });
  await listener.start();
  return {
    store,
    mirror,
    engineMirror,
    listener,
    async close() {
      await listener.stop();
      await Promise.all([mirror.close(), engineMirror.close()]);
    },
  };
}
