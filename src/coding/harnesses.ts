import type { Config, HarnessName } from '../core/config.ts';
import type { Logger } from '../core/logger.ts';
import { createClaudeHarness } from './claude/claude-harness.ts';
import { createCodexHarness } from './codex/codex-harness.ts';
import { createGeminiHarness } from './gemini/gemini-harness.ts';
import type { Harness } from './harness.ts';

/** Builds the three harnesses from the config. */
export function createHarnesses(config: Config, logger: Logger): Record<HarnessName, Harness> {
  const killGraceMs = config.timings.killGraceMs;
  return {
    claude: createClaudeHarness({
      config: config.harnesses.claude,
      killGraceMs,
      logger: logger.child({ harness: 'claude' }),
    }),
    codex: createCodexHarness({
      config: config.harnesses.codex,
      killGraceMs,
      logger: logger.child({ harness: 'codex' }),
    }),
    gemini: createGeminiHarness({
      config: config.harnesses.gemini,
      killGraceMs,
      logger: logger.child({ harness: 'gemini' }),
    }),
  };
}
