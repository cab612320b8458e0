import { existsSync } from 'node:fs';
import type { Config } from '../../core/config.ts';
import type { Logger } from '../../core/logger.ts';
import { mergeEnv } from '../agent-process.ts';
import { findOnPath, findPackageFile, invocationFor, platformSuffix } from '../executables.ts';
import type { Harness, HarnessCheck, Run, RunSpec } from '../harness.ts';
import { createPerTurnHarness } from '../per-turn-harness.ts';
import type { PerTurnBackend, TurnParser, TurnPlan } from '../per-turn-run.ts';
import { AppServerRun } from './app-server-run.ts';
import type { CodexApprovalMode } from './codex-args.ts';
import { appServerArgs, codexApprovalMode, codexArgs } from './codex-args.ts';
import { CodexTurnParser } from './codex-events.ts';
import { CodexUsageTracker } from './codex-usage.ts';

export interface CodexHarnessOptions {
  config: Config['harnesses']['codex'];
  killGraceMs: number;
  logger?: Logger;
}

const PACKAGE = '@openai/codex';

/** Rust target triples of the native binaries, by Node platform suffix (as in the package's own bin/codex.js). */
const TARGETS: Record<string, string> = {
  'linux-x64': 'x86_64-unknown-linux-musl',
  'linux-arm64': 'aarch64-unknown-linux-musl',
  'darwin-x64': 'x86_64-apple-darwin',
  'darwin-arm64': 'aarch64-apple-darwin',
  'win32-x64': 'x86_64-pc-windows-msvc',
  'win32-arm64': 'aarch64-pc-windows-msvc',
};

/**
 * The native binary installed with @openai/codex for this platform: `@openai/codex-<platform>` (an npm alias of
 * `@openai/codex@<version>-<platform>`) holds it at `vendor/<target triple>/bin/codex[.exe]`. Undefined when absent.
 */
export function codexNativeBinary(suffix = platformSuffix()): string | undefined {
  const target = TARGETS[suffix];
  if (!target) return undefined;
  const name = suffix.startsWith('win32') ? 'codex.exe' : 'codex';
  return findPackageFile(`${PACKAGE}-${suffix}`, `vendor/${target}/bin/${name}`);
}

/**
 * The executable to run: harnesses.codex.executable; else the native binary of @openai/codex (spawned directly, so
 * signals reach the process doing the work); else the package's bin/codex.js launcher through this Node; else `codex` on
 * PATH. Undefined when none is found.
 */
export function codexExecutable(config: Config['harnesses']['codex']): string | undefined {
  return config.executable ?? codexNativeBinary() ?? findPackageFile(PACKAGE, 'bin/codex.js') ?? findOnPath('codex');
}

/**
 * One Codex thread as PerTurnRun sees it: every turn is `codex exec --json … [resume <thread_id>] -- <prompt>` in the
 * workdir. The environment is the daemon's, then config.env, then spec.env. One usage tracker spans the run's turns, since
 * Codex reports cumulative thread totals (see codex-usage.ts).
 */
class CodexBackend implements PerTurnBackend {
  #spec: RunSpec;
  #options: CodexHarnessOptions;
  #executable: string;
  #env: Record<string, string | undefined>;
  #usage: CodexUsageTracker;

  constructor(spec: RunSpec, options: CodexHarnessOptions, executable: string) {
    this.#spec = spec;
    this.#options = options;
    this.#executable = executable;
    this.#env = mergeEnv(options.config.env, spec.env);
    this.#usage = new CodexUsageTracker({ known: !spec.resumeBackendId });
  }

  plan(prompt: string, resumeId: string | undefined): TurnPlan {
    if (!existsSync(this.#spec.workdir)) throw new Error(`the workdir ${this.#spec.workdir} does not exist`);
    const { command, argsPrefix } = invocationFor(this.#executable);
    const args = codexArgs({
      prompt,
      workdir: this.#spec.workdir,
      permissionMode: this.#spec.permissionMode,
      config: this.#options.config,
      ...(resumeId ? { resumeId } : {}),
      ...(this.#spec.model ? { model: this.#spec.model } : {}),
      ...(this.#spec.systemPrompt ? { systemPrompt: this.#spec.systemPrompt } : {}),
    });
    this.#options.logger?.debug({ session: this.#spec.sessionId, resume: resumeId }, 'starting a Codex CLI turn');
    return { command, args: [...argsPrefix, ...args], cwd: this.#spec.workdir, env: this.#env };
  }

  parser(): TurnParser {
    return new CodexTurnParser({ usage: this.#usage, ...(this.#spec.model ? { model: this.#spec.model } : {}) });
  }
}

/**
 * A run that can ask: one `codex app-server` process for the whole run (see app-server-run.ts), in the workdir, with the
 * environment of `codex exec` turns.
 */
function startAppServer(spec: RunSpec, options: CodexHarnessOptions, mode: CodexApprovalMode): Run {
  const executable = codexExecutable(options.config) ?? 'codex';
  options.logger?.debug(
    { session: spec.sessionId, workdir: spec.workdir, resume: spec.resumeBackendId, executable },
    'starting the Codex app-server',
  );
  return new AppServerRun({
    sessionId: spec.sessionId,
    prompt: spec.prompt,
    workdir: spec.workdir,
    mode,
    usage: new CodexUsageTracker({ known: !spec.resumeBackendId }),
    killGraceMs: options.killGraceMs,
    ...(spec.model ? { model: spec.model } : {}),
    ...(spec.resumeBackendId ? { resumeId: spec.resumeBackendId } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    plan: () => {
      if (!existsSync(spec.workdir)) throw new Error(`the workdir ${spec.workdir} does not exist`);
      const { command, argsPrefix } = invocationFor(executable);
      const args = appServerArgs(options.config, spec.resumeBackendId ? undefined : spec.systemPrompt);
      return {
        command,
        args: [...argsPrefix, ...args],
        cwd: spec.workdir,
        env: mergeEnv(options.config.env, spec.env),
      };
    },
  });
}

/**
 * The Codex CLI harness. Runs in a permission mode that asks (see `codexApprovalMode`) drive one `codex app-server` per
 * run and turn its approval requests into `permission` events; bypassPermissions and dontAsk runs are one
 * `codex exec --json` process per turn through `PerTurnRun`, resumed by thread id. No fork. `check()` runs `--version`
 * on the executable (see `codexExecutable`).
 */
export function createCodexHarness(options: CodexHarnessOptions): Harness {
  const perTurn = createPerTurnHarness({
    name: 'codex',
    label: 'Codex CLI',
    executable: () => codexExecutable(options.config),
    missing: {
      executable: 'codex',
      problem: `Codex CLI not found: ${PACKAGE} is not installed and there is no \`codex\` on PATH (or set harnesses.codex.executable)`,
    },
    checkEnv: () => mergeEnv(options.config.env),
    backend: (spec, executable) => new CodexBackend(spec, options, executable),
    killGraceMs: options.killGraceMs,
    logger: options.logger,
  });
  return {
    name: 'codex',
    supportsFork: false,
    asksPermission: true,
    start(spec: RunSpec): Run {
      const mode = codexApprovalMode(spec.permissionMode, options.config.sandbox);
      return mode ? startAppServer(spec, options, mode) : perTurn.start(spec);
    },
    check(): Promise<HarnessCheck> {
      return perTurn.check();
    },
  };
}
