import assert from 'node:assert/strict';
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ScriptedHarness } from '../../test/support/scripted-harness.ts';
import { tempDir } from '../../test/support/temp-dir.ts';
import { httpCall } from '../../test/support/web-http.ts';
import { parseSse } from '../cli/sse.ts';
import type { Daemon } from '../main.ts';
import { startDaemon } from '../main.ts';

describe('gateway', () => {
  const dir = tempDir();
  const workdir = join(dir.path, 'work');
  const claude = new ScriptedHarness('claude');
  let daemon: Daemon;

  async function rpc(body: unknown, token: string | null = daemon.token): Promise<{ status: number; json: unknown }> {
    const response = await fetch(`${daemon.url}/rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, json: text ? JSON.parse(text) : null };
  }

  async function call(
    method: string,
    params?: unknown,
  ): Promise<{ result?: unknown; error?: { code: number; message: string; data?: { field?: string } } }> {
    const { json } = await rpc({ jsonrpc: '2.0', id: 1, method, ...(params === undefined ? {} : { params }) });
    return json as { result?: unknown; error?: { code: number; message: string } };
  }

  before(async () => {
    mkdirSync(workdir);
    daemon = await startDaemon({
      home: join(dir.path, 'home'),
      env: {},
      overrides: { 'gateway.port': 0, workspaces: [dir.path], maxSessions: 2, 'log.level': 'silent' },
      harnesses: { claude, codex: new ScriptedHarness('codex', false), gemini: new ScriptedHarness('gemini', false) },
    });
  });
  after(async () => {
    await daemon.stop();
    dir.remove();
  });

  it('creates the token with mode 0600; /healthz says only "alive" without it, and the details with it', async () => {
    assert.equal(statSync(join(daemon.home, 'gateway.token')).mode & 0o777, 0o600);
    const port = Number(new URL(daemon.url).port);
    const callers: Record<string, string>[] = [
      {},
      { host: 'attacker.example' },
      { authorization: 'Bearer wrong-token' },
    ];
    for (const headers of callers) {
      const anonymous = await httpCall(port, 'GET', '/healthz', headers);
      assert.equal(anonymous.status, 200);
      assert.deepEqual(
        JSON.parse(anonymous.body),
        { ok: true, service: 'switchboard' },
        `no details for ${JSON.stringify(headers)}`,
      );
    }
    const health = (await (
      await fetch(`${daemon.url}/healthz`, { headers: { authorization: `Bearer ${daemon.token}` } })
    ).json()) as Record<string, unknown>;
    assert.equal(health.ok, true);
    assert.equal(typeof health.version, 'string');
    assert.equal(health.activeSessions, 0);
    assert.ok('wake' in health && 'outbox' in health, 'delivery and wake counters for the token holder');
  });

  it('answers 401 without a token or with a wrong one', async () => {
    const body = { jsonrpc: '2.0', id: 1, method: 'sessions.list' };
    for (const token of [null, 'wrong-token']) {
      const { status, json } = await rpc(body, token);
      assert.equal(status, 401);
      assert.equal((json as { error: { code: number } }).error.code, -32001);
    }
  });

  it('rejects malformed JSON, invalid requests and unknown methods with JSON-RPC errors', async () => {
    const parse = await rpc('{"jsonrpc": "2.0", ');
    assert.equal(parse.status, 400);
    assert.equal((parse.json as { error: { code: number } }).error.code, -32700);
    const invalid = await rpc({ jsonrpc: '1.0', id: 3, method: 'sessions.list' });
    assert.equal(invalid.status, 400);
    assert.match((invalid.json as { error: { message: string } }).error.message, /"jsonrpc" must be "2.0"/);
    const unknown = await call('sessions.nope');
    assert.equal(unknown.error?.code, -32601);
    assert.match(unknown.error?.message ?? '', /method not found: sessions.nope/);
    const positional = await call('sessions.list', ['all']);
    assert.equal(positional.error?.code, -32602);
  });

  it('names the field on wrong types, bad workdirs and unknown sessions', async () => {
    const wrongType = await call('sessions.launch', { prompt: 42 });
    assert.equal(wrongType.error?.code, -32602);
    assert.match(wrongType.error?.message ?? '', /prompt: .*string/);
    assert.equal(wrongType.error?.data?.field, 'prompt');
    const outside = await call('sessions.launch', { prompt: 'x', workdir: '/' });
    assert.equal(outside.error?.code, -32602);
    assert.match(outside.error?.message ?? '', /workdir: \/ is outside the configured workspaces/);
    const missing = await call('sessions.output', { session: 'ghost' });
    assert.equal(missing.error?.code, -32004);
    assert.match(missing.error?.message ?? '', /no session "ghost"/);
  });

  it('runs batches, skips notifications, and refuses launches over maxSessions naming the limit', async () => {
    const { json } = await rpc([
      { jsonrpc: '2.0', id: 'a', method: 'sessions.launch', params: { prompt: 'one', workdir } },
      { jsonrpc: '2.0', method: 'sessions.list' },
      { jsonrpc: '2.0', id: 'b', method: 'sessions.launch', params: { prompt: 'two', workdir } },
      { jsonrpc: '2.0', id: 'c', method: 'sessions.launch', params: { prompt: 'three', workdir } },
    ]);
    const replies = json as { id: string; result?: { name: string }; error?: { code: number; message: string } }[];
    assert.deepEqual(
      replies.map((r) => r.id),
      ['a', 'b', 'c'],
    );
    assert.equal(replies[0]?.result?.name, 'one');
    const refused = replies.find((r) => r.error);
    assert.equal(refused?.error?.code, -32005);
    assert.match(refused?.error?.message ?? '', /maxSessions limit reached: 2 of 2/);
    const killed = await call('sessions.kill', { session: 'one' });
    assert.equal((killed.result as { status: string }).status, 'killed');
    await call('claude-code.kill', { id: replies.find((r) => r.result && r.id !== 'a')?.result?.name });
  });

  it('streams a session log over SSE from any seq, and resumes after Last-Event-ID', async () => {
    const launched = (await call('sessions.launch', { prompt: 'stream me', workdir })).result as { id: string };
    const run = claude.last;
    await run.emit({ type: 'started', backendSessionId: 'sse-1' }, { type: 'text', text: 'alpha' });
    const controller = new AbortController();
    const response = await fetch(`${daemon.url}/sessions/${launched.id}/events?from=1`, {
      headers: { authorization: `Bearer ${daemon.token}` },
      signal: controller.signal,
    });
    assert.equal(response.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    const seen: { id?: string; event: string }[] = [];
    const reader = parseSse(response.body as ReadableStream<Uint8Array>);
    let emittedLive = false;
    for await (const event of reader) {
      seen.push(event);
      if (event.event === 'output' && !emittedLive) {
        emittedLive = true;
        await run.emit({ type: 'text', text: 'beta' });
      }
      if (event.event === 'output' && JSON.parse(event.data).text === 'beta') break;
    }
    controller.abort();
    assert.deepEqual(
      seen.map((e) => e.event),
      ['created', 'run', 'user', 'backend', 'status', 'output', 'output'],
    );
    assert.deepEqual(
      seen.map((e) => Number(e.id)),
      [1, 2, 3, 4, 5, 6, 7],
    );
    const again = new AbortController();
    const resumed = await fetch(`${daemon.url}/sessions/sse-1/events`, {
      headers: { authorization: `Bearer ${daemon.token}`, 'last-event-id': '5' },
      signal: again.signal,
    });
    for await (const event of parseSse(resumed.body as ReadableStream<Uint8Array>)) {
      assert.equal(event.id, '6', 'the first event after Last-Event-ID 5');
      break;
    }
    again.abort();
    const unauthorized = await fetch(`${daemon.url}/sessions/${launched.id}/events`);
    assert.equal(unauthorized.status, 401);
    const unknown = await fetch(`${daemon.url}/sessions/ghost/events`, {
      headers: { authorization: `Bearer ${daemon.token}` },
    });
    assert.equal(unknown.status, 404);
  });
});
