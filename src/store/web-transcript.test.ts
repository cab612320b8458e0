// The web transcript store on both databases: every change takes a new version, a delivery key appends once, a chat
// keeps only its newest messages, and a page reads the recent history or the changes after a version.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { WebTranscriptStore } from './web-transcript.ts';

describeEachDatabase('WebTranscriptStore', (fresh) => {
  test('user messages: pending, found by client id, and each status change is a new version', async () => {
    const store = new WebTranscriptStore((await fresh()).db, 100);
    const added = await store.addUserMessage('chat-1', 'msg-1', 'hello', 10);
    assert.deepEqual(added, {
      pos: added.pos,
      version: 1,
      chatId: 'chat-1',
      role: 'user',
      text: 'hello',
      clientId: 'msg-1',
      status: 'pending',
      error: null,
      replyTo: null,
      buttons: null,
      createdAt: 10,
      updatedAt: 10,
    });
    assert.deepEqual(await store.byClientId('chat-1', 'msg-1'), added);
    assert.equal(await store.byClientId('chat-2', 'msg-1'), undefined, 'client ids are per chat');
    const failed = await store.setStatus(added.pos, 'failed', 'inbox is full', 11);
    assert.deepEqual(
      [failed.version, failed.status, failed.error, failed.updatedAt],
      [2, 'failed', 'inbox is full', 11],
    );
    const accepted = await store.setStatus(added.pos, 'accepted', null, 12);
    assert.deepEqual([accepted.version, accepted.status, accepted.error], [3, 'accepted', null]);
    await assert.rejects(store.setStatus(added.pos + 1000, 'accepted', null, 13), /vanished/);
    await assert.rejects(store.addUserMessage('chat-1', 'msg-1', 'again', 14), 'a client id is used once per chat');
  });

  test('agent messages: appended as sent, once per delivery key', async () => {
    const store = new WebTranscriptStore((await fresh()).db, 100);
    const first = await store.addAgentMessage('chat-1', 'part one', 'chat-1:msg-1', 20, 'outbox-1-0');
    assert.equal(first.duplicate, false);
    assert.deepEqual(
      [first.message.role, first.message.status, first.message.replyTo, first.message.clientId],
      ['agent', 'sent', 'chat-1:msg-1', null],
    );
    const again = await store.addAgentMessage('chat-1', 'part one', 'chat-1:msg-1', 21, 'outbox-1-0');
    assert.deepEqual(again, { message: first.message, duplicate: true });
    const unkeyed = [
      await store.addAgentMessage('chat-1', 'note', null, 22),
      await store.addAgentMessage('chat-1', 'note', null, 23),
    ];
    assert.deepEqual(
      unkeyed.map((r) => r.duplicate),
      [false, false],
    );
    assert.deepEqual(
      (await store.recent('chat-1', 10)).map((m) => m.text),
      ['part one', 'note', 'note'],
    );
  });

  test('recent history and changes after a version, per chat, in version order; old messages are trimmed', async () => {
    const store = new WebTranscriptStore((await fresh()).db, 3);
    for (const text of ['a', 'b', 'c', 'd']) await store.addAgentMessage('chat-1', text, null, 1);
    await store.addAgentMessage('chat-2', 'elsewhere', null, 1);
    const user = await store.addUserMessage('chat-1', 'msg-1', 'e', 2);
    assert.deepEqual(
      (await store.recent('chat-1', 10)).map((m) => m.text),
      ['c', 'd', 'e'],
      'only the newest 3 are kept',
    );
    const updated = await store.setStatus(user.pos, 'accepted', null, 3);
    const recent = await store.recent('chat-1', 2);
    assert.deepEqual(
      recent.map((m) => [m.text, m.version]),
      [
        ['d', 4],
        ['e', updated.version],
      ],
    );
    assert.deepEqual(
      (await store.changedAfter('chat-1', 4)).map((m) => [m.text, m.status]),
      [['e', 'accepted']],
    );
    assert.deepEqual(
      (await store.changedAfter('chat-1', 0)).map((m) => m.text),
      ['c', 'd', 'e'],
    );
    assert.deepEqual(
      (await store.changedAfter('chat-2', 0)).map((m) => m.text),
      ['elsewhere'],
    );
    assert.deepEqual(await store.changedAfter('chat-1', updated.version), []);
  });

  test('daemon messages keep their buttons; an edit replaces text and buttons under a new version, once', async () => {
    const store = new WebTranscriptStore((await fresh()).db, 100);
    const buttons = [
      [
        { label: 'Allow', command: '/approve k3x9q' },
        { label: 'Allow for session', command: '/approve k3x9q session' },
      ],
      [{ label: 'Deny', command: '/deny k3x9q' }],
    ];
    const { message: asked } = await store.addAgentMessage('chat-1', 'Bash: npm test?', null, 30, 'key-1', buttons);
    assert.deepEqual(asked.buttons, buttons);
    assert.deepEqual((await store.recent('chat-1', 10))[0]?.buttons, buttons, 'kept across a read');
    const plain = await store.addAgentMessage('chat-1', 'no buttons', null, 31, null, []);
    assert.equal(plain.message.buttons, null, 'an empty list is no buttons');

    const edit = await store.editAgentMessage('chat-1', asked.pos, 'Bash: npm test — allowed by web', null, 32);
    assert.equal(edit?.changed, true);
    const edited = edit.message;
    assert.deepEqual(
      [edited.pos, edited.text, edited.buttons, edited.updatedAt, edited.createdAt],
      [asked.pos, 'Bash: npm test — allowed by web', null, 32, 30],
    );
    assert.ok(edited.version > plain.message.version, 'the edit is the newest change');
    assert.deepEqual(
      (await store.changedAfter('chat-1', plain.message.version)).map((m) => [m.pos, m.text]),
      [[asked.pos, 'Bash: npm test — allowed by web']],
    );
    const repeated = await store.editAgentMessage('chat-1', asked.pos, 'Bash: npm test — allowed by web', null, 33);
    assert.deepEqual(repeated, { message: edited, changed: false }, 'the same edit again changes nothing');
    const rebuttoned = await store.editAgentMessage('chat-1', asked.pos, 'again?', [[buttons[1]![0]!]], 34);
    assert.deepEqual(rebuttoned?.message.buttons, [[{ label: 'Deny', command: '/deny k3x9q' }]]);

    assert.equal(await store.editAgentMessage('chat-2', asked.pos, 'x', null, 35), undefined, 'another chat');
    assert.equal(await store.editAgentMessage('chat-1', asked.pos + 100, 'x', null, 35), undefined, 'no such message');
    const user = await store.addUserMessage('chat-1', 'msg-1', 'mine', 36);
    assert.equal(await store.editAgentMessage('chat-1', user.pos, 'x', null, 37), undefined, 'user messages stay');
  });
});
