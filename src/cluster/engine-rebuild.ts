// Before the engine starts on a node of a cluster (PostgreSQL), its logs under `<home>/engine/` are rebuilt from
// `log_records`: the previous holder of the engine wrote them on its own disk, and everything it acknowledged was
// written through to the table first. Each log in the table replaces the file of the same name (written to a temporary
// file, fdatasync'd, renamed over, then the directory fsync'd), so the engine's restore sees every acknowledged record.
// Files of logs the table does not hold are left alone.
import { closeSync, fdatasyncSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePrivateDir, openPrivate } from '../core/private-files.ts';
import type { LogRecord } from '../store/jsonl-log.ts';
import { fsyncDirectory } from '../store/jsonl-log.ts';
import type { LogRecordStore } from '../store/log-records.ts';

const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Writes `records` as the JSONL file at `path`, durably replacing what was there. */
function replaceLog(path: string, records: readonly LogRecord[]): void {
  const temporary = `${path}.rebuild`;
  const fd = openPrivate(temporary, 'w');
  try {
    const bytes = Buffer.from(records.map((r) => `${JSON.stringify(r)}\n`).join(''), 'utf8');
    let offset = 0;
    while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
}

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
    replaceLog(join(dir, `${id}.jsonl`), rows);
    records += rows.length;
  }
  if (ids.length > 0) fsyncDirectory(dir);
  return { logs: ids.length, records };
}
