// Buttons and edits in the outbox: how a message's buttons are checked and stored, how an edit's text is fitted to one
// message, and the error a connector throws when the service will not edit a message any more (it was deleted, or is
// too old): the outbox then sends the replacement as a new message instead.
import { z } from 'zod';
import type { ChatButton } from './connector.ts';
import { DeliveryError } from './delivery-error.ts';

/** The most bytes a button's command may have (Telegram's callback_data limit, which the contract adopts). */
export const MAX_BUTTON_COMMAND_BYTES = 64;

const buttonSchema = z.strictObject({
  label: z.string().trim().min(1, 'must not be empty'),
  command: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .refine((command) => Buffer.byteLength(command, 'utf8') <= MAX_BUTTON_COMMAND_BYTES, {
      message: `must be at most ${MAX_BUTTON_COMMAND_BYTES} bytes`,
    }),
});

/** Rows of buttons as `Outbox.send` accepts them: each row non-empty, each button a label and a short command. */
export const buttonRowsSchema = z.array(z.array(buttonSchema).min(1, 'a row must hold a button'));

/**
 * Thrown by `Connector.edit` when the service refuses, for good, to edit that message (it was deleted, or is too old to
 * edit): the outbox then delivers the replacement as a new message. Permanent, so any other reader treats it as such.
 */
export class EditRefusedError extends DeliveryError {
  constructor(message: string, options: { status?: number; cause?: unknown } = {}) {
    super(message, { kind: 'permanent', ...options });
    this.name = 'EditRefusedError';
  }
}

/** Parses the stored JSON of a row's buttons; undefined when the row has none (null, or no rows). */
export function storedButtons(json: string | null): ChatButton[][] | undefined {
  if (json === null) return undefined;
  const rows = JSON.parse(json) as ChatButton[][];
  return rows.length > 0 ? rows : undefined;
}

/** Fits `text` in one message of at most `max` characters: cut with an ellipsis, never inside a surrogate pair. */
export function fitOneMessage(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max - 1);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}
