// The argv of one `codex exec` turn (Codex CLI 0.169), built without side effects:
//   exec --json --skip-git-repo-check -C <workdir> [-m <model>] <sandbox flags> [-c <key>=<toml>]…
//        [resume <thread_id>] -- <prompt>
// * Every option goes before `resume`: `exec` parses them for its subcommand too (verified for -C, -s, -m, -c), while the
//   `resume` subcommand itself accepts no -s / -C. The prompt comes after `--`, so a prompt starting with "-" is text.
// * `--json` (the SDK's `--experimental-json` is an alias); stdin is not used (PerTurnRun closes it, and a piped stdin would
//   be appended to the prompt).
// * Provider: `-c model_provider="<id>" -c model_providers.<id>.name=… .base_url=… .wire_api="responses" [.env_key=…]`.
//   OPENAI_BASE_URL is never set: Codex 0.169 ignores it.
// * System prompt: `-c developer_instructions="…"` on the first turn of a new thread. Codex sends it as a developer
//   message after its own built-in instructions (appending, not replacing them — `model_instructions_file` would replace
//   them), and the message stays in the thread's history, so resumed turns keep it without repeating it.
import type { Config, PermissionMode } from '../../core/config.ts';

export type CodexConfig = Config['harnesses']['codex'];
export type CodexSandbox = NonNullable<CodexConfig['sandbox']>;

/** What one turn's argv is built from. */
export interface CodexTurnArgs {
  prompt: string;
  workdir: string;
  /** The thread to continue (`resume <id>`); a new thread starts when absent. */
  resumeId?: string;
  model?: string;
  permissionMode: PermissionMode;
  /** Instructions for a new thread (ignored on resume, see above). */
  systemPrompt?: string;
  /** `harnesses.codex`: provider, extra `-c` overrides, sandbox. */
  config: Pick<CodexConfig, 'provider' | 'config' | 'sandbox'>;
}

/**
 * The sandbox flags for a permission mode (`codex exec` never asks for approval, so the sandbox is the only control):
 * plan → `-s read-only` always; bypassPermissions → `--dangerously-bypass-approvals-and-sandbox`, unless
 * harnesses.codex.sandbox is set (then that sandbox); default, acceptEdits, dontAsk and auto → the configured sandbox, else
 * `-s workspace-write` (edits inside the workdir, no network, nothing outside it).
 */
export function codexSandboxArgs(permissionMode: PermissionMode, sandbox: CodexSandbox | undefined): string[] {
  if (permissionMode === 'plan') return ['-s', 'read-only'];
  if (permissionMode === 'bypassPermissions')
    return sandbox ? ['-s', sandbox] : ['--dangerously-bypass-approvals-and-sandbox'];
  return ['-s', sandbox ?? 'workspace-write'];
}

/** A TOML basic string: quoted, with backslash, quote and control characters escaped. */
export function tomlString(value: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what TOML requires escaped
  const escaped = value.replace(/[\\"\u0000-\u001f\u007f]/g, (ch) => {
    switch (ch) {
      case '\\':
        return '\\\\';
      case '"':
        return '\\"';
      case '\n':
        return '\\n';
      case '\r':
        return '\\r';
      case '\t':
        return '\\t';
      default:
        return `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
    }
  });
  return `"${escaped}"`;
}

/** A TOML value for a `-c` override: strings quoted, finite numbers and booleans bare; throws for NaN/Infinity. */
export function tomlValue(value: string | number | boolean): string {
  if (typeof value === 'string') return tomlString(value);
  if (typeof value === 'number' && !Number.isFinite(value))
    throw new Error(`harnesses.codex.config: ${value} is not a finite number`);
  return String(value);
}

/** One `-c key=value` pair; throws when the key is empty or holds "=" or a line break (Codex splits at the first "="). */
export function configOverride(key: string, value: string | number | boolean): string[] {
  if (!key || /[=\r\n]/.test(key)) throw new Error(`harnesses.codex.config: invalid key ${JSON.stringify(key)}`);
  return ['-c', `${key}=${tomlValue(value)}`];
}

/** The `-c` overrides that select a custom model provider (none when `provider` is undefined). */
export function providerOverrides(provider: CodexConfig['provider']): string[] {
  if (!provider) return [];
  const prefix = `model_providers.${provider.id}`;
  return [
    ...configOverride('model_provider', provider.id),
    ...configOverride(`${prefix}.name`, provider.name ?? provider.id),
    ...configOverride(`${prefix}.base_url`, provider.baseUrl),
    ...configOverride(`${prefix}.wire_api`, provider.wireApi),
    ...(provider.envKey ? configOverride(`${prefix}.env_key`, provider.envKey) : []),
  ];
}

const INSTRUCTIONS_KEY = 'developer_instructions';

/**
 * The extra `-c` overrides of harnesses.codex.config, in order, with the run's system prompt appended to any configured
 * `developer_instructions` (on a new thread only).
 */
export function extraOverrides(config: CodexConfig['config'], systemPrompt: string | undefined): string[] {
  const out: string[] = [];
  const own = systemPrompt?.trim();
  for (const [key, value] of Object.entries(config)) {
    if (key === INSTRUCTIONS_KEY && own) continue;
    out.push(...configOverride(key, value));
  }
  if (own) {
    const configured = config[INSTRUCTIONS_KEY];
    const combined = typeof configured === 'string' && configured.trim() ? `${configured.trim()}\n\n${own}` : own;
    out.push(...configOverride(INSTRUCTIONS_KEY, combined));
  }
  return out;
}

/** How Codex asks for approval in a permission mode that asks (see `codexApprovalMode`). */
export interface CodexApprovalMode {
  /** The app-server's `approvalPolicy`: `untrusted` asks before every command not on Codex's safe list and every patch. */
  approvalPolicy: 'untrusted' | 'on-request';
  sandbox: CodexSandbox;
  /** acceptEdits: patches whose every path lies in the workdir are accepted without asking. */
  acceptEditsInWorkdir: boolean;
}

/**
 * How a permission mode asks through `codex app-server`, or null for the modes that never ask, run by `codex exec`:
 * bypassPermissions (no sandbox unless one is configured), dontAsk (the sandbox decides, nothing is asked) and plan (a
 * read-only sandbox: reading needs no approval, and writing is refused). default → `untrusted` in the configured sandbox
 * (else workspace-write); acceptEdits → the same, but patches inside the workdir are accepted without asking; auto →
 * `on-request` in the configured sandbox (else workspace-write): commands run sandboxed without asking, and only what
 * the model asks to run outside the sandbox is asked.
 */
export function codexApprovalMode(
  permissionMode: PermissionMode,
  sandbox: CodexSandbox | undefined,
): CodexApprovalMode | null {
  switch (permissionMode) {
    case 'bypassPermissions':
    case 'dontAsk':
    case 'plan':
      return null;
    case 'default':
    case 'acceptEdits':
      return {
        approvalPolicy: 'untrusted',
        sandbox: sandbox ?? 'workspace-write',
        acceptEditsInWorkdir: permissionMode === 'acceptEdits',
      };
    case 'auto':
      return { approvalPolicy: 'on-request', sandbox: sandbox ?? 'workspace-write', acceptEditsInWorkdir: false };
    default:
      permissionMode satisfies never;
      return null;
  }
}

/**
 * The CLI arguments of a long-lived `codex app-server` (stdio JSON-RPC): the provider and extra `-c` overrides, with the
 * system prompt as developer instructions on a new thread (`systemPrompt` undefined on resume, as with `codex exec`).
 * Model, sandbox and approval policy travel in `thread/start` / `thread/resume` instead.
 */
export function appServerArgs(config: CodexTurnArgs['config'], systemPrompt: string | undefined): string[] {
  return ['app-server', ...providerOverrides(config.provider), ...extraOverrides(config.config, systemPrompt)];
}

/** The CLI arguments for one turn (without the executable or its Node prefix). Pure; throws on an invalid override. */
export function codexArgs(turn: CodexTurnArgs): string[] {
  const args = ['exec', '--json', '--skip-git-repo-check', '-C', turn.workdir];
  if (turn.model) args.push('-m', turn.model);
  args.push(...codexSandboxArgs(turn.permissionMode, turn.config.sandbox));
  args.push(...providerOverrides(turn.config.provider));
  args.push(...extraOverrides(turn.config.config, turn.resumeId ? undefined : turn.systemPrompt));
  if (turn.resumeId) args.push('resume', turn.resumeId);
  args.push('--', turn.prompt);
  return args;
}
