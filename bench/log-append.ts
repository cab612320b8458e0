// Durable log appends per second: switchboard's JsonlLog (one write per record, group-committed fdatasync) beside
// the bare platform doing one write + one fdatasync per record, in the same run on the same disk.
// Run: npm run bench:log   (or: npx node bench/log-append.ts [records] [concurrency])
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JsonlLog } from '../src/store/jsonl-log.ts';
import { printTable } from './stats.ts';

const records = Number(process.argv[2] ?? 5_000);
const concurrency = Number(process.argv[3] ?? 64);
const dir = mkdtempSync(join(tmpdir(), 'sb-bench-log-'));
const payload = { type: 'output', text: 'x'.repeat(120) };

function bare(): number {
  const fd = openSync(join(dir, 'bare.jsonl'), 'a');
  const start = performance.now();
  for (let i = 0; i < records; i += 1) {
    writeSync(fd, `${JSON.stringify({ ...payload, v: 1, seq: i + 1, ts: Date.now() })}\n`);
    fdatasyncSync(fd);
  }
  const ms = performance.now() - start;
  closeSync(fd);
  return (records / ms) * 1000;
}

async function grouped(batchMs: number): Promise<number> {
  const log = JsonlLog.open(join(dir, `group-${batchMs}.jsonl`), { fsyncBatchMs: batchMs });
  const start = performance.now();
  let next = 0;
  // `concurrency` writers, each awaiting durability of its record before sending the next (like chat messages or webhooks).
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < records) {
        next += 1;
        await log.append(payload);
      }
    }),
  );
  const ms = performance.now() - start;
  await log.close();
  return (records / ms) * 1000;
}

try {
  const bareRate = bare();
  const group0 = await grouped(0);
  const group2 = await grouped(2);
  console.log(`durable appends, ${records} records of ~170 bytes, ${concurrency} concurrent writers`);
  printTable(
    ['variant', 'records/s', 'vs bare'],
    [
      ['bare: write + fdatasync per record', bareRate, '1.00x'],
      ['switchboard JsonlLog, group commit (batch 0 ms, default)', group0, `${(group0 / bareRate).toFixed(2)}x`],
      ['switchboard JsonlLog, group commit (batch 2 ms)', group2, `${(group2 / bareRate).toFixed(2)}x`],
    ],
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
