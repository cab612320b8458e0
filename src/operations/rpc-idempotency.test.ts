import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { managerPerTestOn } from '../../test/support/manager-on-store.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import { IdempotencyKeyStore } from '../store/idempotency-keys.ts';
import { Idempotency, IDEMPOTENCY_KEY_RETENTION_MS } from './idempotency.ts';
import type { OperationServices } from './operation.ts';
import { rpcMethods } from './rpc-methods.ts';
import { OPERATIONS } from './table.ts';

describe('RPC idempotency keys (sessions.launch)', () => {
  const { f } = managerPerTestOn((path) => openTestStore(path));
  let services: OperationServices;
  const launch = () => rpcMethods(OPERATIONS).get('sessions.launch');

  beforeEach(() => {
    services = {
      config: f.config,
      sessions: f.manager,
      clock: f.clock,
      idempotency: new Idempotency(new IdempotencyKeyStore(f.db, 'test-process'), f.clock),
    };
  });

  it('a repeat with the same parameters answers the first answer and launches nothing', async () => {
    const method = launch();
    assert.ok(method);
    const params = { prompt: 'fix the build', name: 'fix', workdir: f.workdir, idempotencyKey: 'k-1' };
    const first = (await method.call(params, { kind: 'rpc' }, services)) as { id: string };
    const again = (await method.call({ ...params }, { kind: 'rpc' }, services)) as { id: string };
    assert.deepEqual(again, first);
    assert.equal((await f.store.list()).length, 1);
    // The same parameters spelled otherwise (snake case key, key order) are the same request.
    const snake = (await method.call(
      { idempotency_key: 'k-1', workdir: f.workdir, name: 'fix', prompt: 'fix the build' },
      { kind: 'rpc' },
      services,
    )) as { id: string };
    assert.equal(snake.id, first.id);
  });

  it('other parameters under a used key are a conflict; keys are scoped per caller kind; a bad key is invalid input', async () => {
    const method = launch();
    assert.ok(method);
    await method.call({ prompt: 'one', workdir: f.workdir, idempotencyKey: 'k-2' }, { kind: 'rpc' }, services);
    await assert.rejects(
      method.call({ prompt: 'two', workdir: f.workdir, idempotencyKey: 'k-2' }, { kind: 'rpc' }, services),
      (e: Error & { kind?: string }) => e.kind === 'conflict' && /different request/.test(e.message),
    );
    await method.call({ prompt: 'two', workdir: f.workdir, idempotencyKey: 'k-2' }, { kind: 'cli' }, services);
    assert.equal((await f.store.list()).length, 2);
    await assert.rejects(
      method.call({ prompt: 'x', workdir: f.workdir, idempotencyKey: '' }, { kind: 'rpc' }, services),
      /idempotencyKey: must not be empty/,
    );
  });

  it('a launch that fails frees its key; a key older than the retention runs anew', async () => {
    const method = launch();
    assert.ok(method);
    await assert.rejects(
      method.call({ prompt: 'x', workdir: '/nowhere/at/all', idempotencyKey: 'k-3' }, { kind: 'rpc' }, services),
    );
    const ok = (await method.call(
      { prompt: 'x', workdir: f.workdir, idempotencyKey: 'k-3' },
      { kind: 'rpc' },
      services,
    )) as { id: string };
    f.clock.advance(IDEMPOTENCY_KEY_RETENTION_MS + 1);
    const later = (await method.call(
      { prompt: 'x', workdir: f.workdir, idempotencyKey: 'k-3' },
      { kind: 'rpc' },
      services,
    )) as { id: string };
    assert.notEqual(later.id, ok.id);
  });
});
