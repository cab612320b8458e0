// What the inbox benches share: `concurrency` writers taking message numbers until `messages` are accepted, and the
// engine accepting them durably (the idle model keeps turns from competing for the disk), on the store it is given.
import { mkdirSync } from 'node:fs';
import type { Kysely } from 'kysely';
import { systemClock } from '../../src/core/clock.ts';
import { loadConfig } from '../../src/core/config-load.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { createEngine } from '../../src/engine/create.ts';
import type { Inference, InferenceRequest, InferenceResult } from '../../src/inference/types.ts';
import type { RecordMirror } from '../../src/store/log-records.ts';
import type { Database } from '../../src/store/tables/index.ts';

/** The text of every bench message (~120 characters). */
export const INBOX_TEXT = 'please look at the failing test in the parser and tell me what broke it'.padEnd(120, '.');

/** A model that never answers (until aborted), so turns do not compete with the inbox for the disk. */
const idleModel: Inference = {
  available: true,
  complete: (request: InferenceRequest) =>
    new Promise<InferenceResult>((_, reject) =>
      request.signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true }),
    ),
};

/** Runs `work(i)` for i in 0…messages-1 from `concurrency` writers; resolves with the milliseconds it took. */
export async function runWriters(
  messages: number,
  concurrency: number,
  work: (i: number) => Promise<unknown>,
): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < messages) {
        const i = next;
        next += 1;
        await work(i);
      }
    }),
  );
  return performance.now() - start;
}

/**
 * Messages per second `Engine.acceptUserMessage` accepts durably over `sessions` chats, with its home in `dir` and its
 * index in `db` (and, with `mirror`, each record also committed to PostgreSQL's `log_records` before it is accepted).
 */
export async function engineInboxRate(options: {
  dir: string;
  db: Kysely<Database>;
  mirror?: RecordMirror;
  messages: number;
  sessions: number;
  concurrency: number;
  fsyncBatchMs: number;
}): Promise<number> {
  const { dir, messages, sessions, concurrency } = options;
  mkdirSync(dir, { recursive: true });
  const { config } = loadConfig({
    home: dir,
    env: {},
    overrides: { timings: { fsyncBatchMs: options.fsyncBatchMs }, engine: { stopGraceMs: 0 } },
  });
  const engine = createEngine({
    config,
    clock: systemClock(),
    logger: silentLogger(),
    db: options.db,
    home: dir,
    inference: idleModel,
    outbox: { send: async () => undefined },
    ...(options.mirror ? { mirror: options.mirror } : {}),
  });
  await engine.start();
  const ms = await runWriters(messages, concurrency, (i) =>
    engine.acceptUserMessage({
      id: `m${i}`,
      target: { channel: 'telegram', chat: `${i % sessions}` },
      userId: `${i % sessions}`,
      text: INBOX_TEXT,
      receivedAt: Date.now(),
    }),
  );
  await engine.stop();
  return (messages / ms) * 1000;
}
