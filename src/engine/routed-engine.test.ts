import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { waitFor } from '../../test/support/wait-for.ts';
import type { InboundMessage } from '../channels/connector.ts';
import { systemClock } from '../core/clock.ts';
import { AppError } from '../core/errors.ts';
import { silentLogger } from '../core/logger.ts';
import { EngineCallStore } from '../store/engine-calls.ts';
import type { Accepted, EngineControl, EngineSessionSummary } from './api.ts';
import { EngineCallWorker, RoutedEngine } from './routed-engine.ts';

/** The one session the recording engine lists. */
const HELD: EngineSessionSummary = {
  id: 'user-1',
  descriptor: { type: 'user', connector: 'web', userId: 'u1', channelId: 'c1' },
  state: 'idle',
  queued: 0,
  createdAt: 1,
  updatedAt: 2,
  lastUserAt: 2,
  lastOutcome: 'ok',
};

/** An engine that answers each accepted message with its id and refuses `sendFromSession` as not_found. */
function recordingEngine(): { engine: EngineControl; accepted: string[] } {
  const accepted: string[] = [];
  const refuse = (): Promise<never> => Promise.reject(new AppError('not_found', 'no engine session zz'));
  const engine: EngineControl = {
    async acceptUserMessage(message: InboundMessage): Promise<Accepted> {
      accepted.push(message.text);
      return { sessionId: 'user-1', messageId: message.id, duplicate: false };
    },
    postSystemMessage: async () => null,
    postScheduled: refuse,
    startBackgroundAgent: async (input) => ({ sessionId: `agent-${input.name}` }),
    askAgent: refuse,
    sendFromSession: refuse,
    listSessions: () => [HELD],
    sessions: async () => [HELD],
  };
  return { engine, accepted };
}

const message: InboundMessage = {
  id: 'm1',
  target: { channel: 'web', chat: 'c1' },
  userId: 'u1',
  text: 'hello from another node',
  receivedAt: 1,
};

describeEachDatabase('engine calls routed to the engine holder', (fresh) => {
  it('runs a call made on another node on the holder and hands back its result or its error', async () => {
    const { db, dialect } = await fresh();
    const clock = systemClock();
    const calls = new EngineCallStore(db, { notify: dialect === 'postgres' });
    const { engine, accepted } = recordingEngine();
    const worker = new EngineCallWorker({
      engine,
      calls,
      notices: null,
      holder: 'holder-1',
      clock,
      logger: silentLogger(),
      pollMs: 10,
    });
    const elsewhere = new RoutedEngine({
      local: { ...recordingEngine().engine, listSessions: () => [], sessions: async () => [] },
      servesEngine: () => false,
      calls,
      notices: null,
      clock,
      pollMs: 10,
      timeoutMs: 10_000,
    });
    await worker.start();
    try {
      assert.deepEqual(await elsewhere.acceptUserMessage(message), {
        sessionId: 'user-1',
        messageId: 'm1',
        duplicate: false,
      });
      assert.deepEqual(accepted, ['hello from another node']);
      assert.equal(await elsewhere.postSystemMessage({ sessionId: 'x' }, 'text', 'hook'), null);
      assert.deepEqual(await elsewhere.startBackgroundAgent({ prompt: 'p', name: 'n' }), { sessionId: 'agent-n' });
      await assert.rejects(
        elsewhere.sendFromSession('a', 'b', 'zz'),
        (error: unknown) => error instanceof AppError && error.kind === 'not_found' && /zz/.test(error.message),
      );
      assert.deepEqual(elsewhere.listSessions(), [], 'the synchronous list is the local engine one (empty here)');
      assert.deepEqual(await elsewhere.sessions(), [HELD], "the routed list is the holder's");
    } finally {
      await worker.stop();
    }
  });

  it('a new holder runs again the calls its dead predecessor left running', async () => {
    const { db, dialect } = await fresh();
    const clock = systemClock();
    const calls = new EngineCallStore(db, { notify: dialect === 'postgres' });
    const id = await calls.enqueue('acceptUserMessage', [message], clock.now());
    assert.equal((await calls.claim('dead-holder'))?.id, id);
    const { engine, accepted } = recordingEngine();
    const worker = new EngineCallWorker({
      engine,
      calls,
      notices: null,
      holder: 'new-holder',
      clock,
      logger: silentLogger(),
      pollMs: 10,
    });
    await worker.start();
    try {
      await waitFor(
        'the call to run again',
        async () => ((await calls.outcome(id))?.status === 'done' ? true : undefined),
        10_000,
      );
      assert.deepEqual(accepted, ['hello from another node']);
    } finally {
      await worker.stop();
    }
  });
});
