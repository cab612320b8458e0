import { randomUUID } from 'node:crypto';
import type { Options, PermissionResult, Query, SDKUserMessage } from '@anthropic-ai/claude-agent-sdk';
import { query } from '@anthropic-ai/claude-agent-sdk';
import type { Clock, Timer } from '../../core/clock.ts';
import { systemClock } from '../../core/clock.ts';
import type { Config } from '../../core/config.ts';
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import { mergeEnv } from '../agent-process.ts';
import { EventQueue } from '../event-queue.ts';
import { findPackageFile, isJsEntry, platformSuffix } from '../executables.ts';
import type { Harness, HarnessCheck, HarnessEvent, PermissionDecision, Run, RunSpec } from '../harness.ts';
import { checkExecutable, lastLines } from '../version-check.ts';
import type { ClaudeResult } from './claude-messages.ts';
import { ClaudeEventMapper, parseClaudeMessage } from './claude-messages.ts';
import { ClaudeSpawner } from './claude-spawn.ts';

export interface ClaudeHarnessOptions {
  config: Config['harnesses']['claude'];
  killGraceMs: number;
  logger?: Logger;
  /** Times the wait for an interrupt's acknowledgement; default a system clock whose timer holds the process open. */
  clock?: Clock;
}

/** How long `interrupt()` waits for the CLI to acknowledge before giving up (the turn then ends on its own). */
const INTERRUPT_TIMEOUT_MS = 10_000;
const ROOT_REFUSAL = /root\/sudo privileges/i;
const SDK_EXIT_ERROR = /^Claude Code (process exited|process terminated|returned an error result)/;

/** The bundled Claude Code binary for this platform, if installed. */
export function bundledClaudeExecutable(): string | undefined {
  return findPackageFile(`@anthropic-ai/claude-agent-sdk-${platformSuffix()}`, 'claude');
}

interface PendingPermission {
  resolve: (result: PermissionResult) => void;
  input: Record<string, unknown>;
}

/**
 * One Claude Code process driven through the Agent SDK's `query()` with a streaming-input prompt, so the process serves
 * every turn of the session: `send` pushes the next user message, `end` closes the input (the CLI exits once it is done).
 */
class ClaudeRun implements Run {
  #events = new EventQueue<HarnessEvent>();
  #input = new EventQueue<SDKUserMessage>();
  #abort = new AbortController();
  #mapper = new ClaudeEventMapper();
  #pending = new Map<string, PendingPermission>();
  #spawner: ClaudeSpawner;
  #query: Query | null = null;
  #logger: Logger | undefined;
  #backendId: string | undefined;
  /** Uuids of the user messages sent whose turn has not reported its result yet, oldest first. */
  #outstanding: string[] = [];
  #killed = false;
  #failed = false;
  #finished = false;
  #clock: Clock;

  constructor(spec: RunSpec, options: ClaudeHarnessOptions) {
    this.#clock = options.clock ?? systemClock({ holdProcess: true });
    this.#logger = options.logger?.child({ session: spec.sessionId });
    this.#backendId = spec.resumeBackendId && !spec.forkSession ? spec.resumeBackendId : undefined;
    this.#spawner = new ClaudeSpawner({
      sessionId: spec.sessionId,
      killGraceMs: options.killGraceMs,
      onMalformed: (line, reason) => {
        const shown = line.length > 200 ? `${line.slice(0, 200)}…` : line;
        this.#emit({
          type: 'warning',
          malformed: true,
          message: `dropped a malformed Claude Code output line (${reason}): ${shown}`,
        });
      },
      onStderr: (chunk) => this.#logger?.debug({ stderr: chunk }, 'claude stderr'),
    });
    this.send(spec.prompt);
    try {
      this.#query = query({ prompt: this.#input, options: this.#options(spec, options) });
    } catch (error) {
      this.#finish({ type: 'exited', code: null, error: `could not start Claude Code: ${errorMessage(error)}` });
      return;
    }
    void this.#consume(this.#query);
  }

  get pid(): number | undefined {
    return this.#spawner.pid;
  }

  [Symbol.asyncIterator](): AsyncIterator<HarnessEvent> {
    return this.#events[Symbol.asyncIterator]();
  }

  send(text: string): void {
    if (this.#finished || this.#killed || this.#input.closed) throw new Error('the run has ended');
    const uuid = randomUUID();
    this.#outstanding.push(uuid);
    this.#input.push({
      type: 'user',
      message: { role: 'user', content: text },
      parent_tool_use_id: null,
      session_id: this.#backendId ?? '',
      uuid,
    });
  }

  answerPermission(requestId: string, decision: PermissionDecision): void {
    const pending = this.#pending.get(requestId);
    if (!pending) return;
    this.#pending.delete(requestId);
    pending.resolve(
      decision.allow
        ? { behavior: 'allow', updatedInput: decision.updatedInput ?? pending.input }
        : { behavior: 'deny', message: decision.message },
    );
  }

  async interrupt(): Promise<void> {
    const q = this.#query;
    if (!q || this.#finished || this.#killed || this.#outstanding.length === 0) return;
    this.#mapper.noteInterrupt();
    let timer: Timer | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = this.#clock.after(INTERRUPT_TIMEOUT_MS, () => resolve('timeout'));
    });
    try {
      const answer = await Promise.race([q.interrupt(), timeout]);
      if (answer === 'timeout')
        this.#emit({
          type: 'warning',
          message: `Claude Code did not acknowledge the interrupt within ${INTERRUPT_TIMEOUT_MS / 1000} s`,
        });
    } catch (error) {
      this.#emit({ type: 'warning', message: `interrupt failed: ${errorMessage(error)}` });
    } finally {
      timer?.cancel();
    }
  }

  end(): void {
    this.#input.close();
  }

  kill(): void {
    if (this.#finished || this.#killed) return;
    this.#killed = true;
    this.#input.close();
    this.#denyPending('the run was killed');
    this.#abort.abort();
    this.#spawner.stop();
    if (!this.#spawner.spawned) this.#finish({ type: 'exited', code: null, error: 'killed' });
  }

  #options(spec: RunSpec, options: ClaudeHarnessOptions): Options {
    const config = options.config;
    const bypass = spec.permissionMode === 'bypassPermissions';
    const executable = config.executable;
    const allowedTools = spec.allowedTools ?? config.allowedTools;
    return {
      cwd: spec.workdir,
      abortController: this.#abort,
      // The SDK replaces the child's environment, so the daemon's is merged in here.
      env: mergeEnv(config.env, spec.env),
      permissionMode: spec.permissionMode,
      ...(bypass ? { allowDangerouslySkipPermissions: true } : { canUseTool: this.#canUseTool }),
      settingSources: config.settingSources,
      spawnClaudeCodeProcess: this.#spawner.spawn,
      // We always spawn through spawnClaudeCodeProcess, so the SDK wants the MCP delivery stated: a custom executable may
      // be older than the bundled one and only reads argv; the bundled one reads the initialize request.
      mcpServersDelivery: executable ? 'argv' : 'initialize',
      // Only the SDK's own spawner calls this; ours (always used) keeps the stderr tail and logs it.
      stderr: (chunk: string) => this.#logger?.debug({ stderr: chunk }, 'claude stderr'),
      ...(executable
        ? { pathToClaudeCodeExecutable: executable, ...(isJsEntry(executable) ? { executable: 'node' as const } : {}) }
        : {}),
      ...(spec.model ? { model: spec.model } : {}),
      ...(spec.maxBudgetUsd !== undefined ? { maxBudgetUsd: spec.maxBudgetUsd } : {}),
      ...(allowedTools && allowedTools.length > 0 ? { allowedTools } : {}),
      ...(spec.systemPrompt
        ? { systemPrompt: { type: 'preset' as const, preset: 'claude_code' as const, append: spec.systemPrompt } }
        : {}),
      ...(spec.resumeBackendId
        ? { resume: spec.resumeBackendId, ...(spec.forkSession ? { forkSession: true } : {}) }
        : {}),
    };
  }

  #canUseTool = (
    toolName: string,
    input: Record<string, unknown>,
    context: { signal: AbortSignal; toolUseID: string; requestId?: string },
  ): Promise<PermissionResult> => {
    // AskUserQuestion asks like any tool: the approval shows its choices, and the answer comes back as the tool's input
    // (`answers`, through `PermissionDecision.updatedInput`).
    const requestId = context.requestId ?? context.toolUseID ?? randomUUID();
    return new Promise<PermissionResult>((resolve) => {
      this.#pending.set(requestId, { resolve, input });
      context.signal.addEventListener(
        'abort',
        () => {
          if (this.#pending.delete(requestId))
            resolve({ behavior: 'deny', message: 'the permission request was cancelled' });
        },
        { once: true },
      );
      this.#emit({ type: 'permission', requestId, tool: toolName, input });
    });
  };

  async #consume(q: Query): Promise<void> {
    let failure: unknown = null;
    try {
      for await (const raw of q) {
        const parsed = parseClaudeMessage(raw);
        if (!parsed.ok) {
          this.#emit({
            type: 'warning',
            malformed: true,
            message: `dropped a malformed Claude Code message (${parsed.error})`,
          });
          continue;
        }
        if (parsed.message.kind === 'result') this.#settle(parsed.message.value);
        for (const event of this.#mapper.map(parsed.message)) this.#onEvent(event);
      }
    } catch (error) {
      failure = error;
    }
    this.#denyPending('the Claude Code process ended');
    this.#input.close();
    if (!this.#spawner.spawned) {
      this.#finish({
        type: 'exited',
        code: null,
        error: this.#killed
          ? 'killed'
          : `could not start Claude Code: ${errorMessage(failure ?? 'no process was spawned')}`,
      });
      return;
    }
    if (failure !== null && !this.#spawner.exitInfo) this.#spawner.stop();
    const info = await this.#spawner.exited;
    if (this.#killed) {
      this.#finish({ type: 'exited', code: info.code, error: 'killed' });
      return;
    }
    if (info.spawnError) {
      this.#finish({
        type: 'exited',
        code: null,
        error: `could not start Claude Code (${this.#spawner.command ?? 'claude'}): ${info.spawnError}`,
      });
      return;
    }
    const error = this.#exitError(info.code, info.signal, failure);
    this.#logger?.debug({ code: info.code, signal: info.signal, error }, 'Claude Code exited');
    this.#finish(error ? { type: 'exited', code: info.code, error } : { type: 'exited', code: info.code });
  }

  /** The error an exit deserves, or undefined when the run ended cleanly (or after a failed turn it already reported). */
  #exitError(code: number | null, signal: NodeJS.Signals | null, failure: unknown): string | undefined {
    const stderr = this.#spawner.stderrTail;
    const lines = this.#spawner.lineCounts;
    if (lines.good === 0 && lines.malformed === 0 && ROOT_REFUSAL.test(stderr)) {
      return (
        'Claude Code refused permissionMode bypassPermissions because the daemon runs as root ' +
        `("${lastLines(stderr, 1)}"). Fix: inside a sandbox or container set IS_SANDBOX=1 in harnesses.claude.env ` +
        '(config: "harnesses": {"claude": {"env": {"IS_SANDBOX": "1"}}}), or use another permissionMode, or run the daemon as a normal user.'
      );
    }
    if (this.#failed) return undefined;
    // The SDK's own exit errors only restate the exit; anything else (a protocol failure) is the real cause.
    const sdk = failure !== null && !SDK_EXIT_ERROR.test(errorMessage(failure)) ? errorMessage(failure) : undefined;
    if (code === 0 && signal === null && !sdk) return undefined;
    const how = sdk ? `failed (${sdk})` : signal ? `was killed by ${signal}` : `exited with code ${code}`;
    const when = this.#outstanding.length > 0 ? ' before the turn finished' : '';
    return `Claude Code ${how}${when}${stderr ? `: ${lastLines(stderr)}` : ''}`;
  }

  #onEvent(event: HarnessEvent): void {
    if (this.#failed) return;
    if (event.type === 'started') this.#backendId = event.backendSessionId;
    if (event.type === 'turnEnd') {
      if (!event.outcome.ok && event.outcome.reason !== 'interrupted') {
        // A failed turn ends the run: no more input; the CLI exits once it has flushed its session.
        this.#failed = true;
        this.#emit(event);
        this.#input.close();
        return;
      }
    }
    this.#emit(event);
  }

  /** Marks the user messages a result answers as done (by the uuids it echoes, else the oldest one). */
  #settle(result: ClaudeResult): void {
    const answered = result.user_message_uuids ?? (result.user_message_uuid ? [result.user_message_uuid] : undefined);
    if (answered) this.#outstanding = this.#outstanding.filter((id) => !answered.includes(id));
    else this.#outstanding.shift();
  }

  #denyPending(message: string): void {
    for (const [id, pending] of this.#pending) {
      this.#pending.delete(id);
      pending.resolve({ behavior: 'deny', message });
    }
  }

  #emit(event: HarnessEvent): void {
    if (!this.#finished) this.#events.push(event);
  }

  #finish(event: HarnessEvent & { type: 'exited' }): void {
    if (this.#finished) return;
    this.#events.push(event);
    this.#finished = true;
    this.#events.close();
  }
}

/**
 * The Claude Code harness: each run is one CLI process driven through @anthropic-ai/claude-agent-sdk `query()` with a
 * streaming input, spawned through `ClaudeSpawner` (argv, session tag, schema-filtered stdout). `check()` finds the
 * executable (config, else the SDK's bundled binary) and runs `--version`.
 */
export function createClaudeHarness(options: ClaudeHarnessOptions): Harness {
  return {
    name: 'claude',
    supportsFork: true,
    asksPermission: true,
    start(spec: RunSpec): Run {
      options.logger?.debug(
        { session: spec.sessionId, workdir: spec.workdir, resume: spec.resumeBackendId },
        'starting Claude Code',
      );
      return new ClaudeRun(spec, options);
    },
    async check(): Promise<HarnessCheck> {
      return checkExecutable(options.config.executable ?? bundledClaudeExecutable(), process.env, {
        executable: `@anthropic-ai/claude-agent-sdk-${platformSuffix()}/claude`,
        problem:
          'the Claude Code binary bundled with @anthropic-ai/claude-agent-sdk is not installed (reinstall without --omit=optional, or set harnesses.claude.executable)',
      });
    },
  };
}
