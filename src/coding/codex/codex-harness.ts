import { existsSync } from 'node:fs';
import type { Config } from '../../core/config.ts';
import type { Logger } from '../../core/logger.ts';
import { mergeEnv } from '../agent-process.ts';
import { findOnPath, findPackageFile, invocationFor, platformSuffix } from '../executables.ts';
import type { Harness, RunSpec } from '../harness.ts';
import { createPerTurnHarness } from '../per-turn-harness.ts';
import type { PerTurnBackend, TurnParser, TurnPlan } from '../per-turn-run.ts';
import { codexArgs } from './codex-args.ts';
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
 * The Codex CLI harness: one `codex exec --json` process per turn through `PerTurnRun`, resumed by thread id; no fork.
 * `check()` runs `--version` on the executable (see `codexExecutable`).
 */
export function createCodexHarness(options: CodexHarnessOptions): Harness {
  return createPerTurnHarness({
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
}
