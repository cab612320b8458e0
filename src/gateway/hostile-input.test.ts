import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { WebGatewayFixture } from '../../test/support/web-gateway.ts';
import { webGateway } from '../../test/support/web-gateway.ts';
import { httpCall } from '../../test/support/web-http.ts';

interface RpcReply {
  id: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: { kind?: string; field?: string } };
}

const DEPTH = 5_000;
const deepArray = `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`;
const deepObject = `${'{"a":'.repeat(DEPTH)}1${'}'.repeat(DEPTH)}`;

describe('hostile input to the gateway', () => {
  let g: WebGatewayFixture;
  let auth: Record<string, string>;
  before(async () => {
    g = await webGateway();
    auth = { authorization: `Bearer ${g.gatewayToken}`, 'content-type': 'application/json' };
  });
  after(async () => {
    await g.close();
  });

  const rpc = async (body: string): Promise<{ status: number; reply: RpcReply | RpcReply[] }> => {
    const res = await httpCall(g.port, 'POST', '/rpc', auth, body);
    return { status: res.status, reply: JSON.parse(res.body) as RpcReply | RpcReply[] };
  };
  const one = async (body: string): Promise<RpcReply> => {
    const { reply } = await rpc(body);
    assert.ok(!Array.isArray(reply));
    return reply;
  };

  it('answers batches of 10,000 calls (a body just under 1 MiB) with one -32600 error each, and /healthz stays quick', async () => {
    const calls = Array.from({ length: 10_000 }, (_, i) => ({
      jsonrpc: '2.0',
      id: i,
      method: 'sessions.output',
      params: { session: 'x' },
    }));
    const body = JSON.stringify(calls);
    assert.ok(body.length > 700_000 && body.length < 1_048_576, `body of ${body.length} bytes`);
    const batches = Array.from({ length: 4 }, () => rpc(body));
    const started = performance.now();
    const health = await httpCall(g.port, 'GET', '/healthz');
    const healthMs = performance.now() - started;
    assert.equal(health.status, 200);
    assert.ok(healthMs < 1_000, `/healthz answered in ${Math.round(healthMs)} ms`);
    for (const { status, reply } of await Promise.all(batches)) {
      assert.equal(status, 400);
      assert.ok(!Array.isArray(reply), 'one error for the whole batch');
      assert.equal(reply.error?.code, -32600);
      assert.match(reply.error?.message ?? '', /at most 100 calls \(gateway\.maxBatch\)/);
    }
  });

  it('refuses what would carry /rpc responses past gateway.maxResponseBytes, naming the limit', async (t) => {
    const small = await webGateway({ overrides: { 'gateway.maxResponseBytes': 2_000 } });
    t.after(() => small.close());
    const calls = Array.from({ length: 50 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'sessions.stats' }));
    const headers = { ...auth, authorization: `Bearer ${small.gatewayToken}` };
    const res = await httpCall(small.port, 'POST', '/rpc', headers, JSON.stringify(calls));
    assert.equal(res.status, 200);
    const replies = JSON.parse(res.body) as RpcReply[];
    assert.equal(replies.length, 50);
    const answered = replies.filter((r) => r.result !== undefined);
    assert.ok(answered.length > 0 && answered.length < 50, `${answered.length} results fit`);
    const refused = replies.filter((r) => r.error);
    assert.ok(
      refused.every((r) => r.error?.code === -32005 && /gateway\.maxResponseBytes \(2000\)/.test(r.error.message)),
    );
    assert.ok(res.body.length < 2_000 + 50 * 250, `the body stays near the limit (${res.body.length} bytes)`);
  });

  it('answers a body over the limit with a JSON-RPC error from the one error handler', async () => {
    const res = await httpCall(g.port, 'POST', '/rpc', auth, `"${'x'.repeat(1_048_577)}"`);
    assert.equal(res.status, 413);
    const reply = JSON.parse(res.body) as RpcReply & { jsonrpc: string };
    assert.equal(reply.jsonrpc, '2.0');
    assert.equal(reply.id, null);
    assert.equal(reply.error?.code, -32600);
    assert.match(reply.error?.message ?? '', /body is too large/i);
  });

  it('answers 5,000-level nesting anywhere in a JSON-RPC body with a JSON-RPC error', async () => {
    const bodies = [
      deepArray,
      `{"jsonrpc":"2.0","id":1,"method":"sessions.launch","params":{"prompt":${deepArray}}}`,
      `{"jsonrpc":"2.0","id":1,"method":"sessions.list","params":${deepObject}}`,
      `{"jsonrpc":"2.0","id":${deepObject},"method":"sessions.list"}`,
      `{"jsonrpc":"2.0","id":1,"method":${deepArray}}`,
      `[{"jsonrpc":"2.0","id":1,"method":"sessions.output","params":{"session":${deepObject}}}]`,
    ];
    for (const body of bodies) {
      const { status, reply } = await rpc(body);
      assert.ok(status === 200 || status === 400, `status ${status} for ${body.slice(0, 60)}`);
      const replies = Array.isArray(reply) ? reply : [reply];
      assert.equal(replies.length, 1);
      assert.ok([-32600, -32602].includes(replies[0]?.error?.code ?? 0), JSON.stringify(replies[0]).slice(0, 200));
    }
  });

  it('answers 5,000-level nesting in a web API body with a 400', async () => {
    for (const body of [
      `{"id":"msg-00000001","text":${deepArray}}`,
      `{"id":"msg-00000001","text":"hi","a":${deepObject}}`,
      deepArray,
    ]) {
      const res = await httpCall(g.port, 'POST', '/web/api/chats/chat-test-0001/messages', auth, body);
      assert.equal(res.status, 400, res.body.slice(0, 200));
      assert.match(JSON.parse(res.body).error as string, /text|a|expected object/);
    }
  });

  it('treats constructor, toString and __proto__ as unknown parameter and method names', async () => {
    for (const name of ['constructor', 'toString', '__proto__']) {
      const param = await one(`{"jsonrpc":"2.0","id":1,"method":"sessions.list","params":{"${name}":1}}`);
      assert.equal(param.error?.code, -32602, name);
      assert.match(param.error?.message ?? '', new RegExp(`^list: unknown parameter ${name} \\(accepted: status`));
      assert.equal(param.error?.data?.field, name);
      const method = await one(`{"jsonrpc":"2.0","id":1,"method":"${name}"}`);
      assert.equal(method.error?.code, -32601, name);
      assert.equal(method.error?.message, `method not found: ${name}`);
    }
  });

  it('refuses constructor and __proto__ as web API fields with a 400 naming them', async () => {
    const post = (body: string) => httpCall(g.port, 'POST', '/web/api/chats/chat-test-0001/messages', auth, body);
    const ctor = await post('{"id":"msg-00000002","text":"hi","constructor":1}');
    assert.equal(ctor.status, 400);
    assert.match(JSON.parse(ctor.body).error as string, /constructor/);
    const proto = await post('{"id":"msg-00000003","text":"hi","__proto__":{"x":1}}');
    assert.equal(proto.status, 400);
    assert.match(JSON.parse(proto.body).error as string, /^body: .*"__proto__"/);
  });
});
