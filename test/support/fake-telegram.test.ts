import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { FakeTelegram } from './fake-telegram.ts';
import { FAKE_BOT_TOKEN, startFakeTelegram } from './fake-telegram.ts';

interface Reply {
  ok: boolean;
  result?: unknown;
  error_code?: number;
  description?: string;
  parameters?: { retry_after?: number };
}

describe('fake Telegram Bot API (wire format)', () => {
  let fake: FakeTelegram;
  const call = async (
    method: string,
    body?: unknown,
    init: RequestInit = {},
  ): Promise<{ status: number; reply: Reply }> => {
    const response = await fetch(`${fake.url}/bot${FAKE_BOT_TOKEN}/${method}`, {
      method: 'POST',
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      ...init,
    });
    return { status: response.status, reply: (await response.json()) as Reply };
  };

  beforeEach(async () => {
    fake = await startFakeTelegram();
  });
  afterEach(async () => {
    await fake.close();
  });

  it('answers getMe, and 401 for a wrong token', async () => {
    const me = await call('getMe');
    assert.equal((me.reply.result as { username: string }).username, 'switchboard_test_bot');
    const wrong = await fetch(`${fake.url}/bot1:nope/getMe`);
    assert.equal(wrong.status, 401);
    assert.deepEqual(await wrong.json(), { ok: false, error_code: 401, description: 'Unauthorized' });
  });

  it('long-polls getUpdates until an update arrives, and confirms updates below the offset', async () => {
    const poll = call('getUpdates', { timeout: 30, allowed_updates: ['message'] });
    await fake.waitFor(() => fake.polling, 'a pending poll');
    const { updateId } = fake.pushMessage({ fromId: 5, text: 'hi' });
    const first = await poll;
    const updates = first.reply.result as { update_id: number; message: { text: string; chat: { id: number } } }[];
    assert.deepEqual(
      updates.map((u) => [u.update_id, u.message.text, u.message.chat.id]),
      [[updateId, 'hi', 5]],
    );
    assert.equal(fake.pendingUpdates().length, 1, 'not confirmed by being returned');
    const again = await call('getUpdates', { offset: updateId + 1, timeout: 0 });
    assert.deepEqual(again.reply.result, []);
    assert.equal(fake.confirmedUpTo, updateId);
    assert.deepEqual(fake.offsets, [updateId + 1]);
  });

  it('answers 409 to a poll replaced by a newer one, and accepts form bodies', async () => {
    const older = call('getUpdates', { timeout: 30 });
    await fake.waitFor(() => fake.polling, 'a pending poll');
    const newer = await fetch(`${fake.url}/bot${FAKE_BOT_TOKEN}/getUpdates`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'timeout=0&allowed_updates=%5B%22message%22%5D',
    });
    assert.equal(newer.status, 200);
    const replaced = await older;
    assert.equal(replaced.status, 409);
    assert.match(replaced.reply.description ?? '', /^Conflict: terminated by other getUpdates request/);
  });

  it('checks MarkdownV2 like Telegram and records what users see', async () => {
    const bad = await call('sendMessage', { chat_id: 5, text: 'Done.', parse_mode: 'MarkdownV2' });
    assert.equal(bad.status, 400);
    assert.equal(
      bad.reply.description,
      "Bad Request: can't parse entities: Character '.' is reserved and must be escaped with the preceding '\\'",
    );
    const good = await call('sendMessage', {
      chat_id: 5,
      text: '*Done\\.* `x`',
      parse_mode: 'MarkdownV2',
      message_thread_id: 3,
    });
    assert.equal(good.status, 200);
    assert.deepEqual(
      [fake.sent[0]?.text, fake.sent[0]?.threadId, fake.sent[0]?.entities.map((e) => e.type)],
      ['Done. x', 3, ['bold', 'code']],
    );
    const long = await call('sendMessage', { chat_id: 5, text: 'x'.repeat(4097) });
    assert.equal(long.reply.description, 'Bad Request: message is too long');
  });

  it('plays scripted failures in order, then recovers', async () => {
    fake.fail('sendMessage', { status: 429, retryAfter: 7 });
    fake.fail('sendMessage', { status: 500 });
    const limited = await call('sendMessage', { chat_id: 5, text: 'a' });
    assert.deepEqual(
      [limited.status, limited.reply.parameters?.retry_after, limited.reply.description],
      [429, 7, 'Too Many Requests: retry after 7'],
    );
    assert.equal((await call('sendMessage', { chat_id: 5, text: 'a' })).status, 500);
    assert.equal((await call('sendMessage', { chat_id: 5, text: 'a' })).status, 200);
    assert.equal(fake.sent.length, 1);
  });

  it('validates setMyCommands and records the list', async () => {
    assert.equal((await call('setMyCommands', { commands: [{ command: 'Bad-Name', description: 'x' }] })).status, 400);
    assert.equal(
      (await call('setMyCommands', { commands: [{ command: 'claude', description: 'Claude' }] })).status,
      200,
    );
    assert.deepEqual(fake.commands, [{ command: 'claude', description: 'Claude' }]);
  });

  it('sends an inline keyboard, checks its callback_data like Telegram, and edits the message in place', async () => {
    const keyboard = { inline_keyboard: [[{ text: 'Allow', callback_data: '/approve k3x9' }]] };
    const sent = await call('sendMessage', { chat_id: 5, text: 'Allow?', reply_markup: keyboard });
    const message = sent.reply.result as { message_id: number; reply_markup?: unknown };
    assert.deepEqual(message.reply_markup, keyboard);
    assert.deepEqual(fake.sent[0]?.keyboard, [[{ text: 'Allow', callbackData: '/approve k3x9' }]]);
    const tooLong = { inline_keyboard: [[{ text: 'X', callback_data: 'x'.repeat(65) }]] };
    const refused = await call('sendMessage', { chat_id: 5, text: 'x', reply_markup: tooLong });
    assert.deepEqual([refused.status, refused.reply.description], [400, 'Bad Request: BUTTON_DATA_INVALID']);
    const form = await fetch(`${fake.url}/bot${FAKE_BOT_TOKEN}/sendMessage`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ chat_id: '5', text: 'form', reply_markup: JSON.stringify(keyboard) }).toString(),
    });
    assert.equal(form.status, 200);
    assert.deepEqual(fake.sent[1]?.keyboard, fake.sent[0]?.keyboard, 'the markup as JSON in a form body');

    const edit = { chat_id: 5, message_id: message.message_id, text: '*Allowed*', parse_mode: 'MarkdownV2' };
    const edited = await call('editMessageText', { ...edit, reply_markup: { inline_keyboard: [] } });
    assert.equal(edited.status, 200);
    assert.deepEqual(
      [fake.sent[0]?.text, fake.sent[0]?.keyboard, fake.edits.map((e) => [e.messageId, e.text])],
      ['Allowed', undefined, [[message.message_id, 'Allowed']]],
    );
    const again = await call('editMessageText', edit);
    assert.match(again.reply.description ?? '', /^Bad Request: message is not modified/);
    const gone = await call('editMessageText', { ...edit, message_id: 999 });
    assert.equal(gone.reply.description, 'Bad Request: message to edit not found');
  });

  it('delivers a press as a callback_query of the message pressed, answered once', async () => {
    await call('sendMessage', {
      chat_id: -100123,
      text: 'Allow?',
      message_thread_id: 7,
      reply_markup: { inline_keyboard: [[{ text: 'Deny', callback_data: '/deny k3x9' }]] },
    });
    const messageId = fake.sent[0]?.messageId ?? -1;
    const { updateId, queryId } = fake.press(-100123, 5, messageId, '/deny k3x9', { username: 'owner' });
    const polled = await call('getUpdates', { timeout: 0, allowed_updates: ['message', 'callback_query'] });
    const [update] = polled.reply.result as {
      update_id: number;
      callback_query: {
        id: string;
        from: { id: number; username?: string };
        data: string;
        message: { message_id: number; chat: { id: number }; message_thread_id?: number; reply_markup?: unknown };
      };
    }[];
    assert.equal(update?.update_id, updateId);
    const query = update?.callback_query;
    assert.deepEqual(
      [query?.id, query?.from.id, query?.from.username, query?.data, query?.message.message_id],
      [queryId, 5, 'owner', '/deny k3x9', messageId],
    );
    assert.deepEqual([query?.message.chat.id, query?.message.message_thread_id], [-100123, 7]);
    assert.ok(query?.message.reply_markup, 'the pressed message carries its keyboard');
    const onlyMessages = await call('getUpdates', { timeout: 0, allowed_updates: ['message'] });
    assert.deepEqual(onlyMessages.reply.result, [], 'a press is not delivered to a bot that did not ask for it');

    const answered = await call('answerCallbackQuery', {
      callback_query_id: queryId,
      text: 'Denied',
      show_alert: true,
    });
    assert.equal(answered.status, 200);
    assert.deepEqual(fake.callbackAnswers, [{ queryId, text: 'Denied', showAlert: true }]);
    const twice = await call('answerCallbackQuery', { callback_query_id: queryId });
    assert.match(twice.reply.description ?? '', /query ID is invalid/);
  });
});
