import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { pino } from 'pino';
import type { InboundMessage } from '../../src/channels/connector.ts';
import { createHarnesses } from '../../src/coding/harnesses.ts';
import { SessionManager } from '../../src/coding/session-manager.ts';
import { ManualClock } from '../../src/core/clock.ts';
import type { Config } from '../../src/core/config.ts';
import { loadConfig } from '../../src/core/config-load.ts';
import type { Logger } from '../../src/core/logger.ts';
import { createEngine } from '../../src/engine/create.ts';
import type { Engine } from '../../src/engine/engine.ts';
import { lateToolbox } from '../../src/engine/late-toolbox.ts';
import type { ToolOutcome } from '../../src/engine/tool.ts';
import type { AgentToolbox, EngineSessionInfo } from '../../src/engine/toolbox.ts';
import { mergeToolboxes } from '../../src/engine/toolbox.ts';
import type { InferenceRequest, ToolCall, ToolSpec } from '../../src/inference/types.ts';
import type { OperationServices } from '../../src/operations/operation.ts';
import { OPERATIONS } from '../../src/operations/table.ts';
import { createOperationsToolbox } from '../../src/operations/toolbox.ts';
import { CodingSessionStore } from '../../src/store/coding-sessions.ts';
import { SessionLogs } from '../../src/store/session-logs.ts';
import type { Database } from '../../src/store/tables/index.ts';
import { RecordingOutbox } from './recording-outbox.ts';
import { ScriptedInference } from './scripted-inference.ts';
import { tempDir } from './temp-dir.ts';
import type { OpenStore, TestStore } from './test-store.ts';
import { openSqliteStore } from './test-store.ts';

/** A Telegram message in chat `chatId` from user `userId` (by default the chat's own user, as in a private chat). */
export function chatMessage(id: string, text: string, chatId = '42', userId = chatId): InboundMessage {
  return { id, target: { channel: 'telegram', chat: chatId }, userId, text, receivedAt: 0 };
}

/** True for a model request of a subagent session (its system prompt is the background agent's). */
export function isSubagentRequest(req: InferenceRequest): boolean {
  return req.system.startsWith('You are a background agent');
}

/** A toolbox of test tools: `lookup` answers its input, `explode` throws. Records every call. */
export class FakeToolbox implements AgentToolbox {
  readonly calls: { call: ToolCall; session: EngineSessionInfo }[] = [];

  tools(): ToolSpec[] {
    return [
      {
        name: 'lookup',
        description: 'Looks a word up',
        inputSchema: { type: 'object', properties: { word: { type: 'string' } } },
      },
      { name: 'explode', description: 'Always fails', inputSchema: { type: 'object', properties: {} } },
    ];
  }

  async run(call: ToolCall, session: EngineSessionInfo): Promise<ToolOutcome> {
    this.calls.push({ call, session });
    if (call.name === 'explode') throw new Error('the tool blew up');
    return { text: `found ${JSON.stringify(call.input)}`, isError: false };
  }
}

/** Log lines captured from the engine's logger. */
export interface CapturedLog {
  level: number;
  msg: string;
  [key: string]: unknown;
}

export interface EngineFixture {
  home: string;
  config: Config;
  clock: ManualClock;
  /** The engine's database (SQLite, or what `open` opened). */
  db: Kysely<Database>;
  dialect: TestStore['dialect'];
  inference: ScriptedInference;
  outbox: RecordingOutbox;
  toolbox: FakeToolbox;
  logs: CapturedLog[];
  engine: Engine;
  /** The records of one engine session's log file, parsed. */
  records(sessionId: string): Record<string, unknown>[];
  /** Abandons this engine (as a crash would) and starts a new one over the same files. */
  reopen(options?: { inference?: ScriptedInference }): Promise<EngineFixture>;
  close(): Promise<void>;
}

export interface EngineFixtureOptions {
  overrides?: Record<string, unknown>;
  inference?: ScriptedInference;
  /** Do not call start(). */
  noStart?: boolean;
  /** Opens the database for `<home>/state.db` (`(path) => openTestStore(path)` for both databases); default SQLite. */
  open?: OpenStore;
}

function captureLogger(lines: CapturedLog[]): Logger {
  return pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as CapturedLog) });
}

/**
 * An engine over a real database (a SQLite file, or what `options.open` opens) and real logs in a temp dir, with scripted inference, a recording outbox, and the
 * test tools in front of the operations table's tools.
 */
export async function engineFixture(
  options: EngineFixtureOptions = {},
  existing?: { path: string; remove: () => void },
): Promise<EngineFixture> {
  const dir = existing ?? tempDir('sb-engine-');
  const { config } = loadConfig({
    home: dir.path,
    env: {},
    overrides: {
      ...options.overrides,
      engine: { stopGraceMs: 0, ...(options.overrides?.engine as object | undefined) },
    },
  });
  const clock = new ManualClock();
  const store = await (options.open ?? openSqliteStore)(join(dir.path, 'state.db'));
  const db = store.db;
  const inference = options.inference ?? new ScriptedInference();
  const outbox = new RecordingOutbox();
  const toolbox = new FakeToolbox();
  const logs: CapturedLog[] = [];
  const logger = captureLogger(logs);
  // The table's tools (spawn_agent, send_session_message, …) as in the daemon, behind the test tools.
  const sessions = new SessionManager({
    config,
    clock,
    logger,
    store: new CodingSessionStore(db),
    logs: new SessionLogs(join(dir.path, 'logs'), { fsyncBatchMs: 0, now: () => clock.now() }),
    harnesses: createHarnesses(config, logger),
  });
  const tools = lateToolbox();
  const engine = createEngine({
    config,
    clock,
    logger,
    db,
    home: dir.path,
    inference,
    outbox,
    toolbox: tools,
  });
  const services: OperationServices = { config, sessions, clock, engine };
  tools.bind(mergeToolboxes(toolbox, createOperationsToolbox({ ops: OPERATIONS, services })));
  if (!options.noStart) await engine.start();
  const fixture: EngineFixture = {
    home: dir.path,
    config,
    clock,
    db,
    dialect: store.dialect,
    inference,
    outbox,
    toolbox,
    logs,
    engine,
    records: (sessionId) =>
      readFileSync(join(dir.path, 'engine', `${sessionId}.jsonl`), 'utf8')
        .split('\n')
        .filter((l) => l.trim())
        .flatMap((l) => {
          try {
            return [JSON.parse(l) as Record<string, unknown>];
          } catch {
            return [];
          }
        }),
    reopen: (next = {}) =>
      engineFixture(
        {
          ...options,
          noStart: false,
          ...(next.inference ? { inference: next.inference } : { inference: new ScriptedInference() }),
        },
        dir,
      ),
    async close() {
      await engine.stop();
      await sessions.stop();
      await store.close();
      dir.remove();
    },
  };
  return fixture;
}
