// Inline keyboards and button presses for the fake Telegram Bot API, in the real wire format: `reply_markup` checked as
// Telegram checks an inline keyboard (rows of buttons, each a non-empty text and 1-64 bytes of callback_data), and the
// `callback_query` update Telegram delivers when a person presses a button.

/** One inline keyboard button as the fake understood it (only callback buttons are supported). */
export interface FakeButton {
  text: string;
  callbackData: string;
}

/** A parsed `reply_markup`: the keyboard (undefined when there is none, or it has no rows), or Telegram's error. */
export type KeyboardParse = { ok: true; keyboard: FakeButton[][] | undefined } | { ok: false; error: string };

const MARKUP_INVALID = "Bad Request: can't parse reply keyboard markup JSON object";

/** Checks a `reply_markup` parameter (an object, or its JSON from a form body) like Telegram checks inline keyboards. */
export function parseInlineKeyboard(markup: unknown): KeyboardParse {
  if (markup === undefined || markup === '') return { ok: true, keyboard: undefined };
  let value: unknown = markup;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value) as unknown;
    } catch {
      return { ok: false, error: MARKUP_INVALID };
    }
  }
  const rows = (value as { inline_keyboard?: unknown } | null)?.inline_keyboard;
  if (!Array.isArray(rows)) return { ok: false, error: MARKUP_INVALID };
  const keyboard: FakeButton[][] = [];
  for (const row of rows as unknown[]) {
    if (!Array.isArray(row)) return { ok: false, error: "Bad Request: can't parse inline keyboard button row" };
    const buttons: FakeButton[] = [];
    for (const button of row as { text?: unknown; callback_data?: unknown }[]) {
      if (typeof button?.text !== 'string' || button.text.trim() === '')
        return { ok: false, error: 'Bad Request: BUTTON_TEXT_INVALID' };
      if (typeof button.callback_data !== 'string')
        return { ok: false, error: 'Bad Request: text buttons are unallowed in the inline keyboard' };
      const bytes = Buffer.byteLength(button.callback_data, 'utf8');
      if (bytes < 1 || bytes > 64) return { ok: false, error: 'Bad Request: BUTTON_DATA_INVALID' };
      buttons.push({ text: button.text, callbackData: button.callback_data });
    }
    if (buttons.length > 0) keyboard.push(buttons);
  }
  return { ok: true, keyboard: keyboard.length > 0 ? keyboard : undefined };
}

/** The `reply_markup` field of a Message object carrying `keyboard`, or nothing. */
export function markupField(keyboard: FakeButton[][] | undefined): Record<string, unknown> {
  if (!keyboard) return {};
  return {
    reply_markup: {
      inline_keyboard: keyboard.map((row) => row.map((b) => ({ text: b.text, callback_data: b.callbackData }))),
    },
  };
}

/** What a press needs: who pressed, the message pressed (as a Message object), the button's data. */
export interface PressInput {
  queryId: string;
  userId: number;
  message: Record<string, unknown>;
  data: string;
  firstName?: string;
  username?: string;
}

/** The `callback_query` of an update for a press, as Telegram serializes it. */
export function callbackQuery(input: PressInput): Record<string, unknown> {
  const chat = input.message.chat as { id: number };
  return {
    id: input.queryId,
    from: {
      id: input.userId,
      is_bot: false,
      first_name: input.firstName ?? `User${input.userId}`,
      ...(input.username ? { username: input.username } : {}),
    },
    message: input.message,
    chat_instance: `instance-${chat.id}`,
    data: input.data,
  };
}
