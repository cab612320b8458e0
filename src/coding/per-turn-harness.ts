// A harness over a CLI that runs one process per turn (Codex, Gemini): everything but the backend that builds each
// turn's command line and parses its output.
import type { HarnessName } from '../core/config.ts';
import type { Logger } from '../core/logger.ts';
import type { Harness, HarnessCheck, Run, RunSpec } from './harness.ts';
import type { PerTurnBackend } from './per-turn-run.ts';
import { PerTurnRun } from './per-turn-run.ts';
import type { MissingExecutable } from './version-check.ts';
import { checkExecutable } from './version-check.ts';

/** What a per-turn harness is made of. */
export interface PerTurnHarnessSpec {
  name: HarnessName;
  /** How log lines name the CLI, e.g. "Codex CLI". */
  label: string;
  /** The executable as configured or found; undefined when there is none (a run then tries `name` on PATH). */
  executable(): string | undefined;
  /** What `check()` reports when `executable()` finds none. */
  missing: MissingExecutable;
  /** The environment `--version` runs in. */
  checkEnv(): Record<string, string | undefined>;
  /** The backend of one run on `executable`. */
  backend(spec: RunSpec, executable: string): PerTurnBackend;
  killGraceMs: number;
  logger?: Logger;
}

/**
 * A harness with no fork whose runs are `PerTurnRun`s over `def.backend`, each resuming `spec.resumeBackendId` when
 * given; `check()` runs `--version` on the executable (see version-check.ts).
 */
export function createPerTurnHarness(def: PerTurnHarnessSpec): Harness {
  return {
    name: def.name,
    supportsFork: false,
    asksPermission: false,
    start(spec: RunSpec): Run {
      const executable = def.executable() ?? def.name;
      def.logger?.debug(
        { session: spec.sessionId, workdir: spec.workdir, resume: spec.resumeBackendId, executable },
        `starting ${def.label}`,
      );
      return new PerTurnRun(def.backend(spec, executable), {
        sessionId: spec.sessionId,
        prompt: spec.prompt,
        killGraceMs: def.killGraceMs,
        ...(spec.resumeBackendId ? { resumeId: spec.resumeBackendId } : {}),
      });
    },
    async check(): Promise<HarnessCheck> {
      return checkExecutable(def.executable(), def.checkEnv(), def.missing);
    },
  };
}
