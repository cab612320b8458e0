// The Gemini CLI (0.61) command line for one headless turn. Checked against `gemini.js --help` and by running it:
//   --prompt=<text>            the prompt; the `=` form keeps a prompt that starts with "-" from being read as a flag
//                              (`-p "-y x"` fails with "Not enough arguments following: p")
//   --output-format stream-json
//   --approval-mode <mode>     headless runs only get write/shell tools with `yolo`
//   --skip-trust               a fresh workdir is otherwise untrusted
//   --session-id <uuid>        first turn: the id is chosen here, so it is known before the CLI prints `init`
//   --resume <uuid>            later turns (and resumed sessions) continue that session
//   -m <model>                 when a model is given (else the CLI routes with its "auto" classifier)
import type { Config, PermissionMode } from '../../core/config.ts';

export type GeminiApprovalMode = Config['harnesses']['gemini']['approvalMode'];

/** What one turn's argv is built from. */
export interface GeminiTurnArgs {
  prompt: string;
  /** The backend session to continue; when absent a new session starts with `newSessionId`. */
  resumeId?: string;
  /** The uuid for a new session (`--session-id`); ignored when `resumeId` is set. */
  newSessionId: string;
  model?: string;
  /** `harnesses.gemini.approvalMode`. */
  approvalMode: GeminiApprovalMode;
  permissionMode: PermissionMode;
  /** Instructions for the new session; see `promptWithSystem`. */
  systemPrompt?: string;
}

/**
 * The `--approval-mode` for a run: the configured mode, except that permissionMode `plan` runs with `default`. In a
 * headless run `default` offers the model read-only tools only, which is what plan means. The CLI's own `plan` mode is not
 * used: non-interactively its `exit_plan_mode` tool is auto-approved and switches the run to `yolo`.
 */
export function geminiApprovalMode(configured: GeminiApprovalMode, permissionMode: PermissionMode): GeminiApprovalMode {
  return permissionMode === 'plan' ? 'default' : configured;
}

/**
 * The first prompt of a session with the system prompt put in front of it. Gemini CLI has no way to *append* to its
 * system prompt (GEMINI_SYSTEM_MD replaces it entirely, and GEMINI.md context files would have to be written into the
 * user's directories), so the instructions travel in the first user message, clearly delimited; later turns resume the
 * session and so keep them in the history.
 */
export function promptWithSystem(prompt: string, systemPrompt: string | undefined): string {
  if (!systemPrompt?.trim()) return prompt;
  return `<system_instructions>\n${systemPrompt.trim()}\n</system_instructions>\n\n${prompt}`;
}

/** The CLI arguments for one turn (without the executable or its Node prefix). Pure. */
export function geminiArgs(turn: GeminiTurnArgs): string[] {
  const prompt = turn.resumeId ? turn.prompt : promptWithSystem(turn.prompt, turn.systemPrompt);
  const args = [
    `--prompt=${prompt}`,
    '--output-format',
    'stream-json',
    '--approval-mode',
    geminiApprovalMode(turn.approvalMode, turn.permissionMode),
    '--skip-trust',
  ];
  if (turn.resumeId) args.push('--resume', turn.resumeId);
  else args.push('--session-id', turn.newSessionId);
  if (turn.model) args.push('-m', turn.model);
  return args;
}
