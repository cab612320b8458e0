// A real daemon process for crash tests, with its own state directory, a fake Telegram Bot API and a mock model server
// served by the test process (so they outlive the daemon across SIGKILLs and restarts). Each run's output is kept.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DaemonProcess } from './daemon-process.ts';
import { killDaemonProcess, startDaemonProcess } from './daemon-process.ts';
import type { DaemonLogLine } from './e2e-daemon.ts';
import { chatInference, diagnostics, logLines, telegramSection, unexpectedErrors } from './e2e-daemon.ts';
import type { FakeTelegram } from './fake-telegram.ts';
import { startFakeTelegram } from './fake-telegram.ts';
import type { ChatHandler, MockOpenAIChat } from './mock-openai-chat.ts';
import { startMockOpenAIChat } from './mock-openai-chat.ts';
import { tempDir } from './temp-dir.ts';

/** The one Telegram user the rig's bot answers. */
export const RIG_USER = 5151;

export interface CrashRig {
  /** The rig's temp directory (a workspace root): the state directory `home` is inside it. */
  root: string;
  home: string;
  telegram: FakeTelegram;
  model: MockOpenAIChat;
  /** The running daemon (throws when none runs). */
  readonly daemon: DaemonProcess;
  /** Every daemon process started so far, oldest first (the current one last). */
  runs: DaemonProcess[];
  /** Sets top-level config sections (over the rig's own) for the next start. */
  configure(sections: Record<string, unknown>): void;
  /** Starts the daemon (again); `env` adds variables, e.g. `{ SWITCHBOARD_FAULT: 'outbox.after-send' }` to arm a fault point. */
  start(env?: NodeJS.ProcessEnv): Promise<DaemonProcess>;
  /** Starts the daemon with the fault point `step` armed and waits for it to kill itself there (also during start-up). */
  startAndCrash(step: string): Promise<void>;
  /** Waits for the daemon to kill itself at an armed fault point (SIGKILL) and checks it logged the step. */
  crashed(step: string): Promise<void>;
  /** SIGKILLs the daemon and waits for it to die. */
  kill(): Promise<void>;
  /** SIGTERMs the daemon and checks it stopped cleanly (exit code 0). */
  stop(): Promise<void>;
  /** The info line "engine restored" of the current run. */
  restored(): DaemonLogLine;
  /** /healthz of the current run. */
  health(): Promise<{ outbox: { pending: number }; engineSessions: number }>;
  /** Kills what still runs and removes the state directory. */
  close(): Promise<void>;
}

/** Builds a rig: `config` is merged over the rig's own (Telegram, inference, log level info, web page off). */
export async function crashRig(
  prefix: string,
  handler: ChatHandler,
  config: Record<string, unknown> = {},
): Promise<CrashRig> {
  const dir = tempDir(prefix);
  const home = join(dir.path, 'home');
  mkdirSync(home, { recursive: true });
  const telegram = await startFakeTelegram();
  const model = await startMockOpenAIChat({ handler });
  let full: Record<string, unknown> = {
    workspaces: [dir.path],
    log: { level: 'info' },
    channels: { telegram: telegramSection(telegram, [RIG_USER]), web: { enabled: false } },
    inference: chatInference(model.url),
    // No heartbeat timer: the only engine work is what a test makes.
    heartbeat: { intervalMinutes: 0 },
    ...config,
  };
  const write = (): void => writeFileSync(join(home, 'config.json5'), JSON.stringify(full, null, 2));
  write();
  let current: DaemonProcess | null = null;
  const runs: DaemonProcess[] = [];
  const rig: CrashRig = {
    root: dir.path,
    home,
    telegram,
    model,
    runs,
    get daemon(): DaemonProcess {
      if (!current) throw new Error('no daemon is running');
      return current;
    },
    configure(sections) {
      full = { ...full, ...sections };
      write();
    },
    async start(extra = {}) {
      // Keep the SWITCHBOARD_* settings of the environment out of the child: the config file alone decides.
      const env: NodeJS.ProcessEnv = {};
      for (const key of Object.keys(process.env))
        if (key.startsWith('SWITCHBOARD_') || key === 'TELEGRAM_BOT_TOKEN') env[key] = undefined;
      const daemon = await startDaemonProcess(home, { ...env, ...extra }, 30_000);
      current = daemon;
      runs.push(daemon);
      return daemon;
    },
    async kill() {
      const d = rig.daemon;
      d.child.kill('SIGKILL');
      const exit = await d.exited();
      assert.equal(exit.signal, 'SIGKILL');
      current = null;
    },
    async startAndCrash(step) {
      try {
        await rig.start({ SWITCHBOARD_FAULT: step });
      } catch (error) {
        // Killed before it listened (a fault point on the start-up path).
        assert.ok(
          String(error).includes(`fault injected at ${step}`),
          `the daemon killed itself at ${step}: ${String(error)}`,
        );
        return;
      }
      await rig.crashed(step);
    },
    async crashed(step) {
      const d = rig.daemon;
      const exit = await d.exited();
      assert.equal(exit.signal, 'SIGKILL', `the daemon killed itself at ${step}:\n${d.output()}`);
      assert.ok(d.output().includes(`fault injected at ${step}`), `the fault point ${step} was reached`);
      current = null;
    },
    async stop() {
      const d = rig.daemon;
      d.child.kill('SIGTERM');
      const exit = await d.exited();
      current = null;
      assert.equal(exit.code, 0, `the daemon stopped cleanly:\n${d.output()}`);
    },
    restored() {
      const line = logLines(rig.daemon.output()).find((l) => l.msg === 'engine restored');
      assert.ok(line, 'the daemon logged "engine restored"');
      return line;
    },
    async health() {
      const response = await fetch(`${rig.daemon.url}/healthz`, {
        headers: { authorization: `Bearer ${rig.daemon.token}` },
      });
      return (await response.json()) as { outbox: { pending: number }; engineSessions: number };
    },
    async close() {
      await killDaemonProcess(current);
      await telegram.close();
      await model.close();
      dir.remove();
    },
  };
  return rig;
}

/**
 * Builds a rig (see `crashRig`), runs `body` on it and always closes it; when `body` fails, prints the chat and every
 * run's output first.
 */
export async function withCrashRig(
  prefix: string,
  handler: ChatHandler,
  config: Record<string, unknown>,
  body: (rig: CrashRig) => Promise<void>,
): Promise<void> {
  const rig = await crashRig(prefix, handler, config);
  try {
    await body(rig);
  } catch (error) {
    console.log(
      diagnostics(
        rig.telegram,
        rig.runs.map((r) => r.output()),
      ),
    );
    throw error;
  } finally {
    await rig.close();
  }
}

/** Asserts that no daemon run of the rig logged an error line. */
export function assertNoErrorLines(rig: CrashRig): void {
  for (const [i, run] of rig.runs.entries())
    assert.deepEqual(unexpectedErrors(run.output()), [], `no error lines in run ${i + 1}`);
}

/** A cron task as `cron.list` answers it, as far as the crash tests look. */
export interface CronTaskInfo {
  id: string;
  name: string;
  nextRunAt: number | null;
  lastRun: { dueAt: number; kind: string; status: string; missed: number } | null;
}
