import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { silentLogger } from '../core/logger.ts';
import type { MethodCaller } from './json-rpc.ts';
import { handleRpcBody } from './rpc-body.ts';

const logger = silentLogger();
const LIMITS = { maxBatch: 100, maxResponseBytes: 1_048_576 };
const req = (id: number | string, method = 'echo', params: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method,
  params,
});

interface Reply {
  id: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: { kind?: string } };
}

describe('JSON-RPC bodies within the gateway limits', () => {
  it('answers a batch over gateway.maxBatch with one -32600 error naming the limit, running nothing', async () => {
    let calls = 0;
    const call: MethodCaller = async () => ++calls;
    const body = JSON.stringify(Array.from({ length: 10_000 }, (_, i) => req(i, 'sessions.output', { session: 'x' })));
    const answer = await handleRpcBody(body, call, logger, LIMITS);
    assert.equal(answer.status, 400);
    const reply = JSON.parse(answer.body ?? 'null') as Reply;
    assert.ok(!Array.isArray(reply), 'one error, not one per call');
    assert.equal(reply.error?.code, -32600);
    assert.match(reply.error?.message ?? '', /at most 100 calls \(gateway\.maxBatch\); this one holds 10000/);
    assert.equal(calls, 0);
    const atLimit = await handleRpcBody(
      JSON.stringify(Array.from({ length: 100 }, (_, i) => req(i))),
      call,
      logger,
      LIMITS,
    );
    assert.equal((JSON.parse(atLimit.body ?? '[]') as Reply[]).length, 100);
  });

  it('lets the event loop turn between the calls of a batch', async () => {
    const seen: string[] = [];
    const call: MethodCaller = async (_method, params) => {
      const n = (params as { n: number }).n;
      seen.push(`call ${n}`);
      if (n === 0) setImmediate(() => seen.push('other work'));
      return n;
    };
    await handleRpcBody(JSON.stringify([0, 1, 2].map((n) => req(n, 'echo', { n }))), call, logger, LIMITS);
    assert.deepEqual(seen, ['call 0', 'other work', 'call 1', 'call 2']);
  });

  it('refuses a single result over gateway.maxResponseBytes with a clear error instead of sending it', async () => {
    const call: MethodCaller = async () => 'x'.repeat(5_000);
    const answer = await handleRpcBody(JSON.stringify(req(7)), call, logger, {
      maxBatch: 100,
      maxResponseBytes: 4_096,
    });
    assert.ok((answer.body ?? '').length < 1_000);
    const reply = JSON.parse(answer.body ?? 'null') as Reply;
    assert.equal(reply.id, 7);
    assert.equal(reply.error?.code, -32005);
    assert.equal(reply.error?.data?.kind, 'limit');
    assert.match(reply.error?.message ?? '', /response too large: \d+ bytes, over gateway\.maxResponseBytes \(4096\)/);
  });

  it('stops a batch at gateway.maxResponseBytes: the rest is answered "not run" and never called', async () => {
    const called: number[] = [];
    const call: MethodCaller = async (_method, params) => {
      const n = (params as { n: number }).n;
      called.push(n);
      return 'y'.repeat(1_000);
    };
    const body = JSON.stringify(Array.from({ length: 20 }, (_, n) => req(n, 'echo', { n })));
    const answer = await handleRpcBody(body, call, logger, { maxBatch: 100, maxResponseBytes: 3_500 });
    assert.equal(answer.status, 200);
    assert.ok((answer.body ?? '').length < 3_500 + 20 * 250, 'only small errors beyond the limit');
    const replies = JSON.parse(answer.body ?? '[]') as Reply[];
    assert.deepEqual(
      replies.map((r) => r.id),
      Array.from({ length: 20 }, (_, n) => n),
    );
    assert.equal(replies.filter((r) => r.result !== undefined).length, 3);
    assert.match(replies[3]?.error?.message ?? '', /response too large/);
    assert.match(
      replies[4]?.error?.message ?? '',
      /^not run: the batch's responses reached gateway\.maxResponseBytes \(3500\)/,
    );
    assert.deepEqual(called, [0, 1, 2, 3], 'calls after the limit are not run');
  });

  it('turns a result that cannot be serialized into an internal error for that call only', async () => {
    const call: MethodCaller = async (method) => (method === 'bad' ? { n: 1n } : 'ok');
    const answer = await handleRpcBody(JSON.stringify([req(1, 'bad'), req(2, 'good')]), call, logger, LIMITS);
    const replies = JSON.parse(answer.body ?? '[]') as Reply[];
    assert.equal(replies[0]?.error?.code, -32603);
    assert.equal(replies[1]?.result, 'ok');
  });

  it('answers method names that are Object.prototype members as unknown methods', async () => {
    const methods = new Map([['echo', async () => 'ok']]);
    const call: MethodCaller = (method) => methods.get(method)?.();
    for (const method of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      const reply = JSON.parse(
        (await handleRpcBody(JSON.stringify(req(1, method)), call, logger, LIMITS)).body ?? 'null',
      ) as Reply;
      assert.equal(reply.error?.code, -32601, method);
      assert.equal(reply.error?.message, `method not found: ${method}`);
    }
  });
});
