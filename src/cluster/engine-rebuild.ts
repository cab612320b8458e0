// Before the engine starts on a node of a cluster (PostgreSQL), its logs under `<home>/engine/` are rebuilt from
// `log_records`: the previous holder of the engine wrote them on its own disk, and everything it acknowledged was
// written through to the table first. Each log in the table replaces the file of the same name (written to a temporary
// file, fdatasync'd, renamed over, then the directory fsync'd), so the engine's restore sees every acknowledged record.
// Files of logs the table does not hold are left alone.
import { join } from 'node:path';
import { ensurePrivateDir } from '../core/private-files.ts';
import type { LogRecordStore } from '../store/log-records.ts';
import { replaceLogFile } from '../store/log-records.ts';

const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Rebuilds the engine's log files in `dir` from the table; resolves to how many logs and records it wrote. Call it
 * before the engine opens any of them (before `engine.start()`).
 */
export async function rebuildEngineLogs(
  store: LogRecordStore,
  dir: string,
): Promise<{ logs: number; records: number }> {
  ensurePrivateDir(dir);
  let records = 0;
  const ids = (await store.logs('engine')).filter((id) => SAFE_ID.test(id));
  for (const id of ids) {
    const rows = await store.read('engine', id);
    replaceLogFile(join(dir, `${id}.jsonl`), rows);
    records += rows.length;
  }
  return { logs: ids.length, records };
}
