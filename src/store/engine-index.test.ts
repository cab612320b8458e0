import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import type { EngineIndexRow, IndexedMessage } from './engine-index.ts';
import { EngineIndex } from './engine-index.ts';

const row = (id: string, seq: number, lastUserAt: number | null = null): EngineIndexRow => ({
  id,
  key: `user:telegram:${id}`,
  type: 'user',
  createdAt: 1_700_000_000_000,
  updatedAt: 1_700_000_000_000 + seq,
  lastUserAt,
  indexedSeq: seq,
});

describeEachDatabase('EngineIndex', (fresh) => {
  test('apply writes session rows and message ids; a second apply replaces rows and skips ids it has', async () => {
    const index = new EngineIndex((await fresh()).db);
    assert.deepEqual(await index.all(), new Map());
    await index.apply(
      [row('a', 3, 5), row('b', 1)],
      [
        { sessionId: 'a', messageId: 'm1', seq: 2 },
        { sessionId: 'a', messageId: 'm2', seq: 3 },
      ],
    );
    await index.apply(
      [row('a', 7, 2 ** 41)],
      [
        { sessionId: 'a', messageId: 'm2', seq: 3 },
        { sessionId: 'b', messageId: 'm1', seq: 4 },
      ],
    );
    assert.deepEqual(
      await index.all(),
      new Map([
        ['a', row('a', 7, 2 ** 41)],
        ['b', row('b', 1)],
      ]),
    );
    assert.deepEqual(
      await Promise.all([
        index.hasMessage('a', 'm1'),
        index.hasMessage('a', 'm2'),
        index.hasMessage('b', 'm1'),
        index.hasMessage('b', 'm2'),
        index.hasMessage('c', 'm1'),
      ]),
      [true, true, true, false, false],
    );
    await index.apply([], []);
  });

  test('large batches (more rows than one statement carries) are written and looked up whole', async () => {
    const index = new EngineIndex((await fresh()).db);
    const sessions = Array.from({ length: 300 }, (_, i) => row(`s${i}`, i));
    const messages: IndexedMessage[] = Array.from({ length: 1_000 }, (_, i) => ({
      sessionId: `s${i % 300}`,
      messageId: `m${i}`,
      seq: i,
    }));
    await index.apply(sessions, messages);
    assert.equal((await index.all()).size, 300);
    const asked = Array.from({ length: 700 }, (_, i) => index.hasMessage(`s${i % 300}`, `m${i * 2}`));
    assert.deepEqual(
      await Promise.all(asked),
      Array.from({ length: 700 }, (_, i) => i * 2 < 1_000 && (i * 2) % 300 === i % 300),
    );
  });

  test('forget drops a session and its message ids', async () => {
    const index = new EngineIndex((await fresh()).db);
    await index.apply(
      [row('a', 1), row('b', 1)],
      [
        { sessionId: 'a', messageId: 'm1', seq: 1 },
        { sessionId: 'b', messageId: 'm1', seq: 1 },
      ],
    );
    await index.forget('a');
    assert.deepEqual([...(await index.all()).keys()], ['b']);
    assert.deepEqual(await Promise.all([index.hasMessage('a', 'm1'), index.hasMessage('b', 'm1')]), [false, true]);
  });
});
