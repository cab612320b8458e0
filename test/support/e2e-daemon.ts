// Shared pieces of the end-to-end tests over the real daemon: the config sections that point it at the fake Telegram
// Bot API and at a mock model server, the parsed log lines it wrote, and the texts the fake received per chat.
import { PassThrough } from 'node:stream';
import type { Daemon } from '../../src/main.ts';
import { startDaemon } from '../../src/main.ts';
import type { FakeTelegram } from './fake-telegram.ts';
import type { ChatBody, ChatRequestMessage } from './mock-openai-chat.ts';
import { messageText } from './mock-openai-chat.ts';

/** pino's error level: lines at or above it are errors. */
export const ERROR_LEVEL = 50;

/** `channels.telegram` for a bot served by `fake`, answering only `allowedUserIds`; polls briefly so stops are quick. */
export function telegramSection(fake: FakeTelegram, allowedUserIds: number[]): Record<string, unknown> {
  return {
    enabled: true,
    botToken: fake.token,
    allowedUserIds,
    apiRoot: fake.url,
    pollTimeoutSeconds: 1,
    retryBaseDelayMs: 50,
    retryMaxDelayMs: 200,
    format: 'markdown',
  };
}

/** `inference` with one openai-compatible provider at the mock Chat Completions server `url`. */
export function chatInference(url: string): Record<string, unknown> {
  return {
    providers: [{ id: 'mock', kind: 'openai-compatible', model: 'gpt-mock', baseUrl: `${url}/v1` }],
    timeoutMs: 300_000,
  };
}

/** One parsed pino line. */
export interface DaemonLogLine {
  level: number;
  msg?: string;
  [key: string]: unknown;
}

/** Node's own process warnings on stderr (deprecations, …): warnings, not errors. */
const NODE_WARNING = /^\(node:\d+\) |^\(Use `node --trace-warnings/;

/**
 * The log lines in a daemon's output: its JSON lines parsed; Node's process warnings as level 40; any other line (a
 * stack trace on stderr, say) as level 60, so it counts as an error.
 */
export function logLines(output: string): DaemonLogLine[] {
  const lines: DaemonLogLine[] = [];
  for (const raw of output.split('\n')) {
    if (!raw.trim()) continue;
    const other = { level: NODE_WARNING.test(raw) ? 40 : 60, msg: raw };
    try {
      const parsed = JSON.parse(raw) as DaemonLogLine;
      lines.push(typeof parsed === 'object' && parsed !== null && typeof parsed.level === 'number' ? parsed : other);
    } catch {
      lines.push(other);
    }
  }
  return lines;
}

/** Error-level lines whose message matches none of `expected`. */
export function unexpectedErrors(output: string, expected: RegExp[] = []): DaemonLogLine[] {
  return logLines(output).filter((l) => l.level >= ERROR_LEVEL && !expected.some((re) => re.test(String(l.msg ?? ''))));
}

/** The texts (as a user sees them) the bot sent to `chat`, in order. */
export function textsTo(fake: FakeTelegram, chat: number | string): string[] {
  return fake.sent.filter((m) => m.chatId === String(chat)).map((m) => m.text);
}

/** The system prompt of a Chat Completions request ('' when there is none). */
export function systemText(body: ChatBody): string {
  const messages: ChatRequestMessage[] = Array.isArray(body.messages) ? body.messages : [];
  return messages
    .filter((m) => m.role === 'system')
    .map(messageText)
    .join('\n');
}

/** True for a model request of a cron session's turn (its system prompt names the scheduled task). */
export function isCronTurn(body: ChatBody): boolean {
  return systemText(body).includes('session of the scheduled task');
}

/**
 * What a failed end-to-end test prints to explain itself: the messages the bot sent, and the daemon's log lines at
 * warn and above (plus anything that is not a log line).
 */
export function diagnostics(fake: FakeTelegram, outputs: string[]): string {
  const chat = fake.sent.map((m) => `  → ${m.chatId}: ${JSON.stringify(m.text)}`).join('\n');
  const logs = outputs
    .map(
      (output, i) =>
        `  run ${i + 1}:\n${logLines(output)
          .filter((l) => l.level >= 40)
          .map((l) => `    ${JSON.stringify(l)}`)
          .join('\n')}`,
    )
    .join('\n');
  return `Telegram messages sent:\n${chat || '  (none)'}\nDaemon log (warn and above):\n${logs}`;
}

/** A daemon started in this process whose log lines are kept (see `output`). */
export interface LoggedDaemon {
  daemon: Daemon;
  /** Everything the daemon logged so far. */
  output(): string;
}

/** Starts the daemon in this process on `home` (gateway on a free port, info log kept in memory) with `overrides`. */
export async function startLoggedDaemon(home: string, overrides: Record<string, unknown>): Promise<LoggedDaemon> {
  let output = '';
  const destination = new PassThrough();
  destination.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const daemon = await startDaemon({
    home,
    env: {},
    logDestination: destination,
    overrides: { 'gateway.port': 0, 'log.level': 'info', ...overrides },
  });
  return { daemon, output: () => output };
}
