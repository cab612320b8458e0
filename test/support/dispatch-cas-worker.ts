// A worker thread for the dispatch CAS race test: opens its own SQLite connection to the shared file, waits at the
// barrier until every worker is ready, then tries one operation through the async store (the one Kysely instance of its
// connection) and reports whether it won.
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../../src/store/database.ts';
import { sqliteKysely } from '../../src/store/kysely/connection.ts';
import { DispatchStore } from '../../src/store/linear-dispatches.ts';

interface Job {
  path: string;
  barrier: SharedArrayBuffer;
  workers: number;
  op: 'transition' | 'claim';
  dispatchId: string;
}

const job = workerData as Job;
const db = openDatabase(job.path);
const store = new DispatchStore(sqliteKysely(db));
const counter = new Int32Array(job.barrier);
Atomics.add(counter, 0, 1);
Atomics.notify(counter, 0);
while (Atomics.load(counter, 0) < job.workers) Atomics.wait(counter, 0, Atomics.load(counter, 0), 50);
let won: string | null;
if (job.op === 'transition') {
  won = (await store.compareAndSwap(job.dispatchId, 'working', 'auditing', Date.now(), { attempt: 1 }))?.id ?? null;
} else {
  won = (await store.claimNextQueued(1, Date.now()))?.id ?? null;
}
db.close();
parentPort?.postMessage({ won });
