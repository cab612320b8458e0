import { randomUUID } from 'node:crypto';
import type { Config } from '../../core/config.ts';
import type { Logger } from '../../core/logger.ts';
import { mergeEnv } from '../agent-process.ts';
import { findOnPath, findPackageFile, invocationFor } from '../executables.ts';
import type { Harness, RunSpec } from '../harness.ts';
import { createPerTurnHarness } from '../per-turn-harness.ts';
import type { PerTurnBackend, TurnParser, TurnPlan } from '../per-turn-run.ts';
import { geminiArgs } from './gemini-args.ts';
import { ensureGatewayAuthSettings, NO_RELAUNCH_ENV } from './gemini-env.ts';
import { GeminiTurnParser } from './gemini-events.ts';

export interface GeminiHarnessOptions {
  config: Config['harnesses']['gemini'];
  killGraceMs: number;
  logger?: Logger;
}

const PACKAGE = '@google/gemini-cli';
const BUNDLE = 'bundle/gemini.js';

/** The executable to run: harnesses.gemini.executable, else the bundle installed with @google/gemini-cli, else `gemini` on PATH. */
export function geminiExecutable(config: Config['harnesses']['gemini']): string | undefined {
  return config.executable ?? findPackageFile(PACKAGE, BUNDLE) ?? findOnPath('gemini');
}

/**
 * One Gemini session as PerTurnRun sees it: every turn is `gemini --prompt=… --output-format stream-json`, the first with
 * a `--session-id` chosen here, the next ones with `--resume <id>`. The environment is the daemon's, then
 * GEMINI_CLI_NO_RELAUNCH=true (so SIGTERM reaches the process that does the work), then config.env, then spec.env.
 */
class GeminiBackend implements PerTurnBackend {
  #spec: RunSpec;
  #options: GeminiHarnessOptions;
  #executable: string;
  #env: Record<string, string | undefined>;
  #authChecked = false;

  constructor(spec: RunSpec, options: GeminiHarnessOptions, executable: string) {
    this.#spec = spec;
    this.#options = options;
    this.#executable = executable;
    this.#env = mergeEnv(NO_RELAUNCH_ENV, options.config.env, spec.env);
  }

  plan(prompt: string, resumeId: string | undefined): TurnPlan {
    this.#ensureAuth();
    const { command, argsPrefix } = invocationFor(this.#executable);
    const args = geminiArgs({
      prompt,
      newSessionId: randomUUID(),
      approvalMode: this.#options.config.approvalMode,
      permissionMode: this.#spec.permissionMode,
      ...(resumeId ? { resumeId } : {}),
      ...(this.#spec.model ? { model: this.#spec.model } : {}),
      ...(this.#spec.systemPrompt ? { systemPrompt: this.#spec.systemPrompt } : {}),
    });
    this.#options.logger?.debug({ session: this.#spec.sessionId, resume: resumeId }, 'starting a Gemini CLI turn');
    return { command, args: [...argsPrefix, ...args], cwd: this.#spec.workdir, env: this.#env };
  }

  parser(): TurnParser {
    return new GeminiTurnParser();
  }

  /** The base-URL auth workaround (see gemini-env.ts), once per run; a write failure makes the turn fail to start. */
  #ensureAuth(): void {
    if (this.#authChecked) return;
    this.#authChecked = true;
    const result = ensureGatewayAuthSettings(this.#env);
    if (result.action === 'written') {
      this.#options.logger?.info(
        { path: result.path },
        'selected auth type gemini-api-key in the Gemini settings (GOOGLE_GEMINI_BASE_URL is set)',
      );
    } else if (result.action === 'skipped') {
      this.#options.logger?.warn(
        { path: result.path, reason: result.reason },
        'GOOGLE_GEMINI_BASE_URL is set but the Gemini settings could not be checked; the CLI may reject the "gateway" auth type',
      );
    }
  }
}

/**
 * The Gemini CLI harness: one CLI process per turn through `PerTurnRun`, resumed by session id; no fork. `check()` runs
 * `--version` on the executable (config, else the installed bundle through this Node, else `gemini` on PATH).
 */
export function createGeminiHarness(options: GeminiHarnessOptions): Harness {
  return createPerTurnHarness({
    name: 'gemini',
    label: 'Gemini CLI',
    executable: () => geminiExecutable(options.config),
    missing: {
      executable: 'gemini',
      problem: `Gemini CLI not found: ${PACKAGE} is not installed and there is no \`gemini\` on PATH (or set harnesses.gemini.executable)`,
    },
    checkEnv: () => mergeEnv(NO_RELAUNCH_ENV, options.config.env),
    backend: (spec, executable) => new GeminiBackend(spec, options, executable),
    killGraceMs: options.killGraceMs,
    logger: options.logger,
  });
}
