// The permission-rule language of approvals, as Claude Code writes it: `Tool` or `Tool(specifier)`. A bare name
// matches every use of the tool (`mcp__server` every tool of that server, as does `mcp__server__*`); `Bash(…)` is a
// command rule (bash-command-rules.ts); Read/Edit/Write/MultiEdit/NotebookEdit/Glob/Grep/LS rules hold a path pattern
// (rule-syntax-paths.ts) matched against the input's `file_path` (NotebookEdit: `notebook_path`; Glob, Grep, LS:
// `path`, else the cwd). `Edit` rules also cover Write, MultiEdit and NotebookEdit, and `Read` rules Glob, Grep and
// LS. `WebFetch(domain:host)` matches that host and its subdomains. Any other specifier must equal the input's
// primary field (the first string of file_path, path, command, cmd, pattern, glob, query, url). Inside a specifier
// `\(`, `\)` and `\\` stand for `(`, `)` and `\`. Tool inputs are untrusted JSON: only own properties are read, and
// nothing is walked.

import { homedir } from 'node:os';
import { truncate } from '../coding/format.ts';
import { summarizeToolInput } from '../coding/tool-summary.ts';
import { invalidInput } from '../core/errors.ts';
import { bashSpecifierMatches, type RulePurpose, sessionBashSpecifier } from './bash-command-rules.ts';
import { pathPatternMatches } from './rule-syntax-paths.ts';

export type { RulePurpose } from './bash-command-rules.ts';

/** A parsed rule: `Bash(npm test:*)` is `{ tool: 'Bash', specifier: 'npm test:*' }`; a bare `Read` has null. */
export interface PermissionRule {
  tool: string;
  specifier: string | null;
}

/** A tool call as rules see it; `home` (for `~/` patterns) defaults to the daemon user's home directory. */
export interface RuleCall {
  tool: string;
  input: unknown;
  cwd: string;
  home?: string;
}

/** Longest rule text accepted (an exact command of bash-command.ts's MAX_COMMAND fits). */
const MAX_RULE = 12_000;
const TOOL_NAME = /^[A-Za-z][A-Za-z0-9_.-]*$/;
const PATH_TOOLS = new Set(['Read', 'Edit', 'Write', 'MultiEdit', 'NotebookEdit', 'Glob', 'Grep', 'LS']);
const COVERED: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ['Edit', new Set(['Write', 'MultiEdit', 'NotebookEdit'])],
  ['Read', new Set(['Glob', 'Grep', 'LS'])],
]);
const PRIMARY_KEYS = ['file_path', 'path', 'command', 'cmd', 'pattern', 'glob', 'query', 'url'];

/**
 * Parses Claude Code rule text (`Read`, `Bash(git status:*)`, `mcp__github`). Throws the invalid_input error for
 * field `rule` when it is empty, too long, has unbalanced parentheses, an empty specifier or a bad tool name.
 */
export function parseRule(text: string): PermissionRule {
  const trimmed = text.trim();
  if (trimmed === '') throw bad('is empty: write a tool name such as Read, or Bash(npm test:*)');
  const shown = JSON.stringify(truncate(trimmed, 60));
  if (trimmed.length > MAX_RULE) throw bad(`is longer than ${MAX_RULE} characters`);
  const open = trimmed.indexOf('(');
  if (open < 0) {
    if (trimmed.includes(')')) throw bad(`${shown} has unbalanced parentheses`);
    return { tool: checkTool(trimmed, shown), specifier: null };
  }
  const tool = checkTool(trimmed.slice(0, open), shown);
  if (!trimmed.endsWith(')') || escapedAt(trimmed, trimmed.length - 1)) {
    throw bad(`${shown} has unbalanced parentheses: it must end with ")"`);
  }
  const raw = trimmed.slice(open + 1, -1);
  if (!balanced(raw)) throw bad(`${shown} has unbalanced parentheses: write \\( or \\) for a literal one`);
  const specifier = raw.replace(/\\([\\()])/g, '$1');
  if (specifier.trim() === '') throw bad(`${shown} has an empty specifier: write ${tool} alone to match every use`);
  return { tool, specifier };
}

/** Writes a rule back as text; `parseRule(formatRule(r))` equals `r` for every rule parseRule returns. */
export function formatRule(rule: PermissionRule): string {
  if (rule.specifier === null) return rule.tool;
  const plain = !rule.specifier.includes('\\') && balanced(rule.specifier);
  return `${rule.tool}(${plain ? rule.specifier : rule.specifier.replace(/[\\()]/g, '\\$&')})`;
}

/**
 * Whether `rule` matches `call` (see the file comment). `purpose` is `allow` by default: a compound command then
 * matches only when every part does. For `deny` one matching part is enough.
 */
export function ruleMatches(rule: PermissionRule, call: RuleCall, purpose: RulePurpose = 'allow'): boolean {
  if (!toolCovered(rule.tool, call.tool)) return false;
  const specifier = rule.specifier;
  if (specifier === null) return true;
  if (rule.tool === 'Bash') {
    const command = ownString(call.input, 'command');
    return command !== undefined && bashSpecifierMatches(specifier, command, purpose);
  }
  if (PATH_TOOLS.has(rule.tool)) return pathRuleMatches(specifier, call, purpose);
  if (rule.tool === 'WebFetch' && specifier.startsWith('domain:')) {
    return domainMatches(specifier.slice('domain:'.length), ownString(call.input, 'url'));
  }
  return primaryField(call.input) === specifier;
}

/**
 * The rule "Allow for session" stores for `call`: for Bash the command up to its arguments (`npm test --watch` →
 * `Bash(npm test:*)`; compound or risky commands exactly), for WebFetch `WebFetch(domain:<host>)`, else the bare
 * tool name. Throws invalid_input (field `input.command` / `input.url`) when a Bash or WebFetch input lacks it.
 */
export function sessionRuleFor(call: { tool: string; input: unknown }): PermissionRule {
  if (call.tool === 'Bash') {
    const command = ownString(call.input, 'command');
    if (command === undefined || command.trim() === '')
      throw invalidInput('Bash input has no command', 'input.command');
    return { tool: 'Bash', specifier: sessionBashSpecifier(command) };
  }
  if (call.tool === 'WebFetch') {
    const url = ownString(call.input, 'url');
    if (url === undefined || url.trim() === '') throw invalidInput('WebFetch input has no url', 'input.url');
    const host = hostOf(url);
    return { tool: 'WebFetch', specifier: host ? `domain:${host}` : url.trim() };
  }
  return { tool: call.tool, specifier: null };
}

/** The one line a person reads about a call: `Bash: npm test`, `Edit: src/a.ts`, or the tool name alone. */
export function describeCall(call: { tool: string; input: unknown }): string {
  const tool = truncate(call.tool, 60);
  const summary = summarizeToolInput(call.input);
  return summary ? `${tool}: ${summary}` : tool;
}

function bad(what: string): Error {
  return invalidInput(`rule ${what}`, 'rule');
}

function checkTool(tool: string, shown: string): string {
  const server = tool.endsWith('__*') ? tool.slice(0, -3) : null; // `mcp__github__*`: every tool of one server
  const name = server ?? tool;
  if (!TOOL_NAME.test(name) || (server !== null && !/^mcp__./.test(server))) {
    throw bad(`${shown} has a bad tool name: it must start with a letter and hold only letters, digits, _ . -`);
  }
  return tool;
}

/** Whether the character at `at` follows an odd number of backslashes. */
function escapedAt(text: string, at: number): boolean {
  let count = 0;
  for (let i = at - 1; i >= 0 && text[i] === '\\'; i -= 1) count += 1;
  return count % 2 === 1;
}

/** Whether the unescaped parentheses of `text` pair up. */
function balanced(text: string): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (c === '\\') i += 1;
    else if (c === '(') depth += 1;
    else if (c === ')' && --depth < 0) return false;
  }
  return depth === 0;
}

function toolCovered(ruleTool: string, callTool: string): boolean {
  if (ruleTool === callTool || COVERED.get(ruleTool)?.has(callTool) === true) return true;
  if (!ruleTool.startsWith('mcp__')) return false;
  if (ruleTool.endsWith('__*')) return callTool.startsWith(ruleTool.slice(0, -1));
  const server = ruleTool.slice('mcp__'.length);
  return !server.includes('__') && callTool.startsWith(`${ruleTool}__`);
}

/** The input field that names what a file tool touches; the searches read `path` and default to the cwd. */
const PATH_FIELD: Readonly<Record<string, string>> = {
  NotebookEdit: 'notebook_path',
  Glob: 'path',
  Grep: 'path',
  LS: 'path',
};

function pathRuleMatches(pattern: string, call: RuleCall, purpose: RulePurpose): boolean {
  const searches = call.tool === 'Glob' || call.tool === 'Grep' || call.tool === 'LS';
  const field = Object.hasOwn(PATH_FIELD, call.tool) ? (PATH_FIELD[call.tool] as string) : 'file_path';
  const target = ownString(call.input, field) ?? (searches ? call.cwd : undefined);
  if (target === undefined) return false;
  // A Glob pattern can reach outside its `path` (`../x`, `{..,a}/x`, `/etc/*`): such a search no path rule allows.
  const glob = call.tool === 'Glob' ? ownString(call.input, 'pattern') : undefined;
  if (purpose === 'allow' && glob !== undefined && (/^[/~]/.test(glob) || glob.includes('..'))) return false;
  return pathPatternMatches(pattern, target, call.cwd, call.home ?? homedir(), searches);
}

function domainMatches(domain: string, url: string | undefined): boolean {
  const host = url === undefined ? null : hostOf(url);
  const wanted = domain.trim().toLowerCase().replace(/\.$/, '');
  if (host === null || wanted === '') return false;
  if (wanted.startsWith('*.')) return host.endsWith(wanted.slice(1));
  return host === wanted || host.endsWith(`.${wanted}`);
}

/** The lower-case host name of an http(s) URL, or null. */
function hostOf(url: string): string | null {
  if (!URL.canParse(url)) return null;
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null;
  return parsed.hostname.toLowerCase().replace(/\.$/, '') || null;
}

function ownString(input: unknown, key: string): string | undefined {
  if (typeof input !== 'object' || input === null || Array.isArray(input) || !Object.hasOwn(input, key)) {
    return undefined;
  }
  const value: unknown = (input as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}

function primaryField(input: unknown): string | undefined {
  for (const key of PRIMARY_KEYS) {
    const value = ownString(input, key);
    if (value !== undefined && value !== '') return value;
  }
  return undefined;
}
