// The worker thread of WalCheckpointer: its own connection to the database file, running passive checkpoints on demand.
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';

/** What the main thread sends: run a checkpoint, or close the connection and end. */
export type CheckpointRequest = 'checkpoint' | 'close';

/** What the thread answers after each checkpoint (SQLite's `wal_checkpoint` row). */
export interface CheckpointDone {
  busy: number;
  log: number;
  checkpointed: number;
}

const port = parentPort;
if (!port) throw new Error('wal-checkpoint-thread: not started as a worker thread');
const db = new DatabaseSync((workerData as { file: string }).file);
// A checkpoint that finds the database busy returns without waiting (PASSIVE never waits); the next one catches up.
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');

port.on('message', (request: CheckpointRequest) => {
  if (request === 'close') {
    db.close();
    port.close();
    return;
  }
  const row = checkpoint.get() as Partial<CheckpointDone> | undefined;
  const done: CheckpointDone = { busy: row?.busy ?? 0, log: row?.log ?? 0, checkpointed: row?.checkpointed ?? 0 };
  port.postMessage(done);
});
