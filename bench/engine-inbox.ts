// Engine inbox throughput: messages per second accepted durably (on disk, fdatasync'd, deduplicated, queued) by
// Engine.acceptUserMessage, beside bare JsonlLog appends of the same record with the same fsync batching, the same
// number of files and the same number of concurrent writers, in the same run on the same disk.
// Run: node bench/engine-inbox.ts [messages] [sessions] [concurrency] [fsyncBatchMs]
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/store/database.ts';
import { JsonlLog } from '../src/store/jsonl-log.ts';
import { sqliteKysely } from '../src/store/kysely/connection.ts';
import { engineInboxRate, INBOX_TEXT, runWriters } from './support/inbox-writers.ts';

const messages = Number(process.argv[2] ?? 5_000);
const sessions = Number(process.argv[3] ?? 20);
const concurrency = Number(process.argv[4] ?? 64);
const batchMs = Number(process.argv[5] ?? 0);

async function bare(dir: string): Promise<number> {
  mkdirSync(dir, { recursive: true });
  const logs = Array.from({ length: sessions }, (_, s) =>
    JsonlLog.open(join(dir, `bare-${s}.jsonl`), { fsyncBatchMs: batchMs }),
  );
  const ms = await runWriters(messages, concurrency, (i) =>
    (logs[i % sessions] as JsonlLog).append({
      type: 'incoming',
      messageId: `m${i}`,
      kind: 'user',
      origin: `telegram|${i % sessions}`,
      text: INBOX_TEXT,
      from: `${i % sessions}`,
      replyTo: `m${i}`,
    }),
  );
  await Promise.all(logs.map((l) => l.close()));
  return (messages / ms) * 1000;
}

async function engine(dir: string): Promise<number> {
  mkdirSync(dir, { recursive: true });
  const db = openDatabase(join(dir, 'state.db'));
  try {
    return await engineInboxRate({ dir, db: sqliteKysely(db), messages, sessions, concurrency, fsyncBatchMs: batchMs });
  } finally {
    db.close();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'sb-bench-inbox-'));
try {
  // Bare before and after the engine, averaged, so that disk warm-up favours neither.
  const bareRate = await bare(join(dir, 'bare1'));
  const engineRate = await engine(join(dir, 'home'));
  const bareAgain = await bare(join(dir, 'bare2'));
  const baseline = (bareRate + bareAgain) / 2;
  console.log(
    `durable inbox, ${messages} messages of ~${INBOX_TEXT.length} chars over ${sessions} sessions, ${concurrency} concurrent writers, fsyncBatchMs ${batchMs}`,
  );
  const rows: [string, string, string][] = [
    ['bare JsonlLog.append (same record, same files)', baseline.toFixed(0), '1.00x'],
    [
      'Engine.acceptUserMessage (write + fdatasync + dedupe + queue)',
      engineRate.toFixed(0),
      `${(engineRate / baseline).toFixed(2)}x`,
    ],
  ];
  const width = [Math.max(...rows.map((r) => r[0].length)), 12, 8];
  console.log(`${'variant'.padEnd(width[0] as number)}  ${'messages/s'.padStart(12)}  ${'vs bare'.padStart(8)}`);
  for (const [name, rate, ratio] of rows)
    console.log(`${name.padEnd(width[0] as number)}  ${rate.padStart(12)}  ${ratio.padStart(8)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
