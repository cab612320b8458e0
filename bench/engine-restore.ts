// Engine restore time: N sessions with M log records each (realistic turns: message, model reply with a tool call,
// tool result, final reply, sent text, turn markers), beside the bare platform reading the same files in the same run.
// Two engine figures: the first start over an empty index (it reindexes every log: all records parsed) and a
// restart over a current index (only each log's first record and tail are read).
// Run: node bench/engine-restore.ts [sessions] [recordsPerSession]
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../src/core/clock.ts';
import { loadConfig } from '../src/core/config-load.ts';
import { silentLogger } from '../src/core/logger.ts';
import { createEngine } from '../src/engine/create.ts';
import type { Inference } from '../src/inference/types.ts';
import { openDatabase } from '../src/store/database.ts';
import { sqliteKysely } from '../src/store/kysely/connection.ts';

const sessions = Number(process.argv[2] ?? 1_000);
const perSession = Number(process.argv[3] ?? 1_000);
const model: Inference = {
  available: true,
  complete: async () => ({ text: 'ok', toolCalls: [], finishReason: 'stop', provider: 'bench', model: 'bench' }),
};

function turnRecords(n: number): Record<string, unknown>[] {
  const id = `msg-${n}`;
  return [
    {
      type: 'incoming',
      messageId: id,
      kind: 'user',
      origin: 'telegram|42',
      text: `Can you check why build ${n} failed on the parser branch?`,
      from: '42',
      replyTo: id,
    },
    { type: 'turn_start', messageId: id },
    {
      type: 'assistant',
      text: 'Let me look at the session output.',
      toolCalls: [{ id: `call-${n}`, name: 'claude_output', input: { session: 'parser-fix', lines: 40 } }],
    },
    {
      type: 'tool_result',
      toolCallId: `call-${n}`,
      name: 'claude_output',
      content: 'FAIL src/parser.test.ts > parses nested arrays\n'.repeat(4),
      isError: false,
    },
    {
      type: 'assistant',
      text: `Build ${n} failed in the nested-array parser test; the session is fixing it now.`,
      toolCalls: [],
    },
    {
      type: 'outgoing',
      text: `Build ${n} failed in the nested-array parser test; the session is fixing it now.`,
      target: 'telegram|42',
    },
    { type: 'turn_end', messageId: id, outcome: 'ok' },
  ];
}

function writeLogs(dir: string): number {
  let bytes = 0;
  for (let s = 0; s < sessions; s += 1) {
    const fd = openSync(join(dir, `s${String(s).padStart(6, '0')}.jsonl`), 'w');
    const lines: string[] = [];
    const push = (entry: Record<string, unknown>) =>
      lines.push(JSON.stringify({ ...entry, v: 1, seq: lines.length + 1, ts: 1_767_225_600_000 + lines.length }));
    push({
      type: 'session_created',
      descriptor: { type: 'user', connector: 'telegram', userId: String(s), channelId: `telegram|${s}` },
    });
    for (let n = 0; lines.length < perSession; n += 1)
      for (const r of turnRecords(n)) if (lines.length < perSession) push(r);
    // End on a closed turn so that restore has nothing to run.
    while (JSON.parse(lines.at(-1) as string).type !== 'turn_end') lines.pop();
    const text = `${lines.join('\n')}\n`;
    bytes += Buffer.byteLength(text);
    writeSync(fd, text);
    closeSync(fd);
  }
  return bytes;
}

function bareRead(dir: string, parse: boolean): number {
  const start = performance.now();
  let _records = 0; // counted so that the parse is not dead code; the figure itself is not reported
  for (const name of readdirSync(dir)) {
    const text = readFileSync(join(dir, name), 'utf8');
    if (!parse) continue;
    for (const line of text.split('\n')) if (line) _records += (JSON.parse(line) as { seq: number }).seq > 0 ? 1 : 0;
  }
  return performance.now() - start;
}

async function engineStart(home: string): Promise<number> {
  const { config } = loadConfig({ home, env: {}, overrides: { engine: { stopGraceMs: 0 } } });
  const db = openDatabase(join(home, 'state.db'));
  const engine = createEngine({
    config,
    clock: new ManualClock(),
    logger: silentLogger(),
    db: sqliteKysely(db),
    home,
    inference: model,
    outbox: { send: async () => undefined },
  });
  const start = performance.now();
  await engine.start();
  const ms = performance.now() - start;
  if (engine.listSessions().length !== sessions)
    throw new Error(`restored ${engine.listSessions().length} of ${sessions} sessions`);
  await engine.stop();
  db.close();
  return ms;
}

const home = mkdtempSync(join(tmpdir(), 'sb-bench-restore-'));
try {
  const logDir = join(home, 'engine');
  mkdirSync(logDir);
  const bytes = writeLogs(logDir);
  bareRead(logDir, false); // warm the page cache for every variant alike
  const readMs = bareRead(logDir, false);
  const parseMs = bareRead(logDir, true);
  const firstMs = await engineStart(home);
  const restartMs = await engineStart(home);
  console.log(
    `engine restore: ${sessions} sessions x ${perSession} records (${(bytes / 1e6).toFixed(0)} MB), page cache warm`,
  );
  const rows: [string, number][] = [
    ['bare: read every file', readMs],
    ['bare: read every file and JSON.parse every line', parseMs],
    ['engine start, empty index (reindexes every record)', firstMs],
    ['engine restart, current index (first record + tail per log)', restartMs],
  ];
  const width = Math.max(...rows.map((r) => r[0].length));
  console.log(`${'variant'.padEnd(width)}  ${'ms'.padStart(9)}  ${'vs read'.padStart(8)}`);
  for (const [name, ms] of rows)
    console.log(`${name.padEnd(width)}  ${ms.toFixed(1).padStart(9)}  ${`${(ms / readMs).toFixed(2)}x`.padStart(8)}`);
} finally {
  rmSync(home, { recursive: true, force: true });
}
