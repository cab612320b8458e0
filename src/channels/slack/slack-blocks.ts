// How an OutboundMessage looks on Slack: its text as mrkdwn (Slack's own markup, with `&`, `<` and `>` escaped and the
// common Markdown of the daemon's messages translated), and its buttons as Block Kit: section blocks holding the text,
// then one `actions` block per row of buttons, each button's `value` being the chat command it stands for.
import type { ChatButton, OutboundMessage } from '../connector.ts';
import { DeliveryError } from '../delivery-error.ts';

/** The longest text of one message the connector sends: Slack's limit on a section block's text. */
export const SLACK_MAX_MESSAGE_LENGTH = 3000;
/** Slack's limits on a button: its label (plain_text) and its value. */
const MAX_BUTTON_LABEL = 75;
const MAX_BUTTON_VALUE = 2000;
/** Slack's limit on the elements of one actions block. */
const MAX_ROW = 25;
/** Every button's action_id starts with this, so the connector only takes presses of its own buttons. */
export const ACTION_PREFIX = 'switchboard:';

/** One Block Kit block, as far as this connector writes them. */
export type SlackBlock =
  | { type: 'section'; text: { type: 'mrkdwn'; text: string } }
  | {
      type: 'actions';
      block_id: string;
      elements: { type: 'button'; action_id: string; text: { type: 'plain_text'; text: string }; value: string }[];
    };

/** What chat.postMessage / chat.update are given for one message: `text` always, `blocks` when it has buttons. */
export interface SlackRendered {
  text: string;
  blocks?: SlackBlock[];
}

/** Escapes the three characters Slack reserves for its own markup. */
export function escapeMrkdwn(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/**
 * The daemon's text (plain, with a little Markdown) as Slack mrkdwn: escaped, `**bold**` as `*bold*`, `[label](url)`
 * as `<url|label>`. Code spans and blocks keep their backticks (Slack reads them alike).
 */
export function toMrkdwn(text: string): string {
  return escapeMrkdwn(text)
    .replace(/\*\*([^*\n]+)\*\*/g, '*$1*')
    .replace(/\[([^\]\n]+)\]\((https?:\/\/[^\s)]+)\)/g, (_m, label: string, url: string) => `<${url}|${label}>`);
}

/** Cuts `text` into pieces of at most `max` characters, preferring line breaks, never inside a surrogate pair. */
function pieces(text: string, max: number): string[] {
  const out: string[] = [];
  let rest = text;
  while (rest.length > max) {
    let end = rest.lastIndexOf('\n', max);
    if (end <= 0) end = max;
    const code = rest.charCodeAt(end - 1);
    if (code >= 0xd800 && code <= 0xdbff) end -= 1;
    out.push(rest.slice(0, end));
    rest = rest.slice(end).replace(/^\n/, '');
  }
  if (rest.length > 0 || out.length === 0) out.push(rest);
  return out;
}

/** One row of buttons as an actions block. Throws a permanent DeliveryError for a button Slack would refuse. */
function actionsBlock(row: ChatButton[], index: number): SlackBlock {
  if (row.length > MAX_ROW)
    throw new DeliveryError(`a row of ${row.length} buttons (Slack takes ${MAX_ROW})`, { kind: 'permanent' });
  return {
    type: 'actions',
    block_id: `${ACTION_PREFIX}row-${index}`,
    elements: row.map((button, i) => {
      const label = button.label.trim();
      if (label === '' || button.command === '' || button.command.length > MAX_BUTTON_VALUE) {
        throw new DeliveryError(`button "${button.label}": a label and a command of 1-${MAX_BUTTON_VALUE} characters`, {
          kind: 'permanent',
        });
      }
      return {
        type: 'button',
        action_id: `${ACTION_PREFIX}${index}-${i}`,
        text: { type: 'plain_text', text: label.slice(0, MAX_BUTTON_LABEL) },
        value: button.command,
      };
    }),
  };
}

/**
 * Renders a message. Without buttons it is only `text` (mrkdwn); with buttons, `blocks` holds the text in sections of
 * at most 3,000 characters and one actions block per row, and `text` stays as the notification's fallback. With
 * `removeButtons` (an edit that drops them) the blocks are the text alone, which replaces the old buttons.
 */
export function renderMessage(message: OutboundMessage, removeButtons = false): SlackRendered {
  const text = toMrkdwn(message.text);
  const rows = message.buttons?.filter((row) => row.length > 0) ?? [];
  if (rows.length === 0 && !removeButtons) return { text };
  const sections: SlackBlock[] = pieces(text, SLACK_MAX_MESSAGE_LENGTH).map((piece) => ({
    type: 'section',
    text: { type: 'mrkdwn', text: piece === '' ? ' ' : piece },
  }));
  return { text, blocks: [...sections, ...rows.map((row, i) => actionsBlock(row, i))] };
}
