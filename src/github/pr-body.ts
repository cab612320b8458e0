// What a session's pull request says: its title and commit message (the prompt's first line) and a body that
// summarizes the session (prompt, what the agent said last, cost, a link to the live session page).

/** The session facts a pull request's text is made from. */
export interface SessionFacts {
  id: string;
  name: string;
  harness: string;
  prompt: string;
  costUsd: number;
  /** The agent's last output block(s), oldest first. */
  lastOutput: readonly string[];
  /** The web page's base (`gateway.publicUrl`, or loopback and the port), if there is one. */
  pageBase: string | undefined;
}

const TITLE_MAX = 72;
const OUTPUT_MAX = 6000;
const PROMPT_MAX = 4000;

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** The first non-empty line of `prompt`, trimmed and cut to 72 characters; `fallback` when it has none. */
export function firstLine(prompt: string, fallback: string): string {
  const line = prompt
    .split(/\r?\n/)
    .map((l) => l.trim())
    .find((l) => l.length > 0);
  return cut(line ?? fallback, TITLE_MAX);
}

/** The live session page of a session, or undefined without a page base. */
export function sessionPageUrl(pageBase: string | undefined, sessionId: string): string | undefined {
  if (!pageBase) return undefined;
  return `${pageBase.replace(/\/+$/, '')}/#session=${encodeURIComponent(sessionId)}`;
}

function quote(text: string): string {
  return text
    .split(/\r?\n/)
    .map((l) => `> ${l}`)
    .join('\n');
}

/** The Markdown body of a session's pull request. */
export function pullRequestBody(s: SessionFacts): string {
  const said = s.lastOutput.join('\n\n').trim();
  const page = sessionPageUrl(s.pageBase, s.id);
  const lines = [
    `Opened by switchboard from the ${s.harness} session **${s.name}**.`,
    '',
    '### Prompt',
    '',
    quote(cut(s.prompt.trim(), PROMPT_MAX)),
    '',
    '### What the agent said last',
    '',
    said.length > 0 ? cut(said, OUTPUT_MAX) : '_(no output)_',
    '',
    `**Cost:** $${s.costUsd.toFixed(2)}`,
  ];
  if (page) lines.push('', `**Live session:** ${page}`);
  return `${lines.join('\n')}\n`;
}
