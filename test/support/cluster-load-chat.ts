// The chat side of a mixed load on a cluster: the orchestrator's fake model answers every turn with the tokens
// (`msg-N`, `wake-N`) of the user messages it was given for that turn, so each Telegram message and each wake can be
// followed to the one reply it got; and the counts of those replies after the cluster settled.
import type { FakeTelegram } from './fake-telegram.ts';
import type { ChatBody, ChatReply } from './mock-openai-chat.ts';
import { chatText, messageText } from './mock-openai-chat.ts';

const TOKEN = /\b(?:msg|wake)-\d+\b/g;
/** What every answer of the fake model starts with. */
export const ANSWER = 'answer:';

/** The tokens in the user messages after the last assistant message of `body`: what this turn was asked. */
export function turnTokens(body: ChatBody): string[] {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  let start = 0;
  messages.forEach((m, i) => {
    if (m.role === 'assistant') start = i + 1;
  });
  return messages
    .slice(start)
    .filter((m) => m.role === 'user')
    .flatMap((m) => messageText(m).match(TOKEN) ?? []);
}

/**
 * The fake model's answer to a turn: `answer: <its tokens>` (or `answer: none`), after `delayMs` (so that turns are
 * under way when a node is killed).
 */
export function answerTurn(body: ChatBody, delayMs = 0): ChatReply {
  const tokens = turnTokens(body);
  return chatText(`${ANSWER} ${tokens.length > 0 ? tokens.join(' ') : 'none'}`, { delayMs });
}

/** What the chat `chat` of the fake Telegram got, counted per token. */
export interface ChatCounts {
  /** How many replies named each token. */
  answered: Map<string, number>;
  /** Replies saying a turn was cut off ("Internal error."). */
  cutOff: number;
  /**
   * The messages those replies answer (a user's message: its Telegram message id), and how many answered none (a
   * system turn: a wake). A turn is one message, so a cut-off notice names the one message whose turn it closed.
   */
  cutOffReplyTo: number[];
  cutOffUnaddressed: number;
  /** Every other text the bot sent there. */
  other: string[];
}

/** Counts the replies the bot sent to `chat`. */
export function countReplies(telegram: FakeTelegram, chat: number): ChatCounts {
  const answered = new Map<string, number>();
  let cutOff = 0;
  const cutOffReplyTo: number[] = [];
  let cutOffUnaddressed = 0;
  const other: string[] = [];
  for (const sent of telegram.sent.filter((m) => m.chatId === String(chat))) {
    if (sent.text.startsWith(ANSWER)) {
      for (const token of sent.text.match(TOKEN) ?? []) answered.set(token, (answered.get(token) ?? 0) + 1);
    } else if (sent.text === 'Internal error.') {
      cutOff += 1;
      if (sent.replyToMessageId === undefined) cutOffUnaddressed += 1;
      else cutOffReplyTo.push(sent.replyToMessageId);
    } else other.push(sent.text);
  }
  return { answered, cutOff, cutOffReplyTo, cutOffUnaddressed, other };
}

/** How many model turns were asked each token (from the recorded request bodies). */
export function countTurns(bodies: readonly ChatBody[]): Map<string, number> {
  const turns = new Map<string, number>();
  for (const body of bodies) for (const token of turnTokens(body)) turns.set(token, (turns.get(token) ?? 0) + 1);
  return turns;
}
