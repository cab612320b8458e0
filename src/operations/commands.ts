import type { ZodType } from 'zod';
import { inlineText } from '../channels/outbox-file.ts';
import { AppError, errorMessage, invalidInput } from '../core/errors.ts';
import { coerceText, fieldKind, kebab } from './field-kind.ts';
import { parseOperationInput } from './input.ts';
import type { Caller, ChatReply, Operation, OperationServices } from './operation.ts';

interface Token {
  text: string;
  start: number;
}

/** Splits a command line into words, honouring "double" and 'single' quotes; keeps each word's start offset. */
export function tokenize(line: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < line.length) {
    while (i < line.length && /\s/.test(line[i] as string)) i += 1;
    if (i >= line.length) break;
    const start = i;
    let text = '';
    while (i < line.length && !/\s/.test(line[i] as string)) {
      const c = line[i] as string;
      if (c === '"' || c === "'") {
        const end = line.indexOf(c, i + 1);
        if (end === -1) throw invalidInput(`unterminated ${c === '"' ? 'double' : 'single'} quote`);
        text += line.slice(i + 1, end);
        i = end + 1;
      } else {
        text += c;
        i += 1;
      }
    }
    tokens.push({ text, start });
  }
  return tokens;
}

/**
 * Parses the arguments of a chat command for `op`: leading `--flag [value]` options (any input key, kebab-case), up to
 * a bare `--` if there is one, then the positional fields in order; the last positional takes the rest of the line
 * verbatim.
 */
export function parseCommandArgs(op: Operation, args: string): Record<string, unknown> {
  const spec = op.expose.command;
  if (!spec) throw new Error(`${op.name} has no chat command`);
  const shape = op.input.shape as Record<string, ZodType>;
  const flags = new Map(Object.keys(shape).map((key) => [kebab(key), key]));
  const tokens = tokenize(args);
  const out: Record<string, unknown> = {};
  let i = 0;
  const positional = [...spec.positional];
  let optionsEnded = false;
  while (i < tokens.length) {
    const token = tokens[i] as Token;
    // A bare `--` ends the options: what follows is text, even when it starts with `--` (`/claude -- --help me`).
    if (!optionsEnded && token.text === '--' && args.slice(token.start, token.start + 2) === '--') {
      optionsEnded = true;
      i += 1;
      continue;
    }
    if (!optionsEnded && token.text.startsWith('--') && token.text.length > 2) {
      // `--no-<flag>` turns off a boolean that is on by default (`/cron_add --no-enabled …`).
      const negated = token.text.startsWith('--no-') ? flags.get(token.text.slice(5)) : undefined;
      const key = flags.get(token.text.slice(2)) ?? negated;
      if (!key) throw invalidInput(`unknown option ${token.text} (usage: ${spec.usage})`);
      const kind = fieldKind(shape[key] as ZodType);
      if (negated && kind !== 'boolean')
        throw invalidInput(`${token.text}: only a yes/no option can be negated (usage: ${spec.usage})`);
      if (kind === 'boolean') {
        out[key] = !negated;
        i += 1;
      } else {
        const value = tokens[i + 1];
        if (!value) throw invalidInput(`${token.text} needs a value (usage: ${spec.usage})`);
        out[key] = coerceText(kind, value.text);
        i += 2;
      }
      continue;
    }
    const key = positional.shift();
    if (!key) throw invalidInput(`too many arguments (usage: ${spec.usage})`);
    const kind = fieldKind(shape[key] as ZodType);
    if (positional.length === 0) {
      // The last positional is free text: take the rest of the line as written.
      const rest = args.slice(token.start).trim();
      out[key] = kind === 'string' ? unquoteWhole(rest) : coerceText(kind, token.text);
      if (kind !== 'string' && i + 1 < tokens.length) throw invalidInput(`too many arguments (usage: ${spec.usage})`);
      break;
    }
    out[key] = coerceText(kind, token.text);
    i += 1;
  }
  return out;
}

function unquoteWhole(text: string): string {
  const m = /^(["'])([\s\S]*)\1$/.exec(text);
  return m ? (m[2] as string) : text;
}

/** Splits "/claude_fg foo" into the command name ("claude_fg", any "@bot" suffix dropped) and its argument text. */
export function splitCommand(text: string): { name: string; args: string } | null {
  const m = /^\/([A-Za-z0-9_]+)(?:@[A-Za-z0-9_]+)?(?:\s+([\s\S]*))?$/.exec(text.trim());
  return m ? { name: (m[1] as string).toLowerCase(), args: m[2] ?? '' } : null;
}

/** The chat commands of the table, with their usage lines. */
export function commandList(ops: readonly Operation[]): { name: string; usage: string; summary: string }[] {
  return ops
    .filter((o) => o.expose.command)
    .map((o) => ({
      name: o.expose.command?.name as string,
      usage: o.expose.command?.usage as string,
      summary: o.summary,
    }));
}

/** The operation whose chat command `text` is, or undefined when it is not one of the table's commands. */
export function commandOperation(ops: readonly Operation[], text: string): Operation | undefined {
  const parts = splitCommand(text);
  return parts ? ops.find((o) => o.expose.command?.name === parts.name) : undefined;
}

/**
 * Runs a chat command if `text` is one of the table's commands. Returns the reply (an error reply for bad input): a
 * text, with a file when the operation answers one (`chatReply`); null when the text is not a known command.
 */
export async function runCommandReply(
  ops: readonly Operation[],
  text: string,
  caller: Caller,
  services: OperationServices,
): Promise<ChatReply | null> {
  const parts = splitCommand(text);
  if (!parts) return null;
  const op = ops.find((o) => o.expose.command?.name === parts.name);
  if (!op) return null;
  try {
    const input = parseOperationInput(op, parseCommandArgs(op, parts.args));
    const result = await op.run({ caller, services }, input);
    return op.chatReply ? op.chatReply(result) : { text: op.format(result) };
  } catch (error) {
    const message = error instanceof AppError ? error.message : `Error: ${errorMessage(error)}`;
    return { text: `⚠️ ${message}\nUsage: ${op.expose.command?.usage}` };
  }
}

/**
 * Runs a chat command like `runCommandReply` and returns its reply as a chat without files shows it (a file's inline
 * form), or null when the text is not a known command.
 */
export async function runCommand(
  ops: readonly Operation[],
  text: string,
  caller: Caller,
  services: OperationServices,
): Promise<string | null> {
  const reply = await runCommandReply(ops, text, caller, services);
  if (reply === null) return null;
  return reply.file ? inlineText(reply.text, reply.file) : reply.text;
}
