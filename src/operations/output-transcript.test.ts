import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { managerPerTest } from '../../test/support/manager-fixture.ts';
import type { Caller, OperationServices } from './operation.ts';
import { rpcMethods } from './rpc-methods.ts';
import { OPERATIONS } from './table.ts';
import { runTool } from './tools.ts';

const rpc: Caller = { kind: 'rpc' };

describe('output, show and sessions: tool calls and a pending permission request', () => {
  const { f } = managerPerTest();
  let services: OperationServices;
  beforeEach(() => {
    services = { config: f.config, sessions: f.manager, clock: f.clock };
  });

  async function sessionAwaitingApproval(): Promise<string> {
    const session = await f.manager.launch({
      prompt: 'clean up',
      name: 'cleaner',
      workdir: f.workdir,
      originChannel: 'cli',
      permissionMode: 'default',
    });
    const run = f.harness.last;
    await run.emit(
      { type: 'started', backendSessionId: 'b' },
      { type: 'text', text: 'Looking at the build.' },
      { type: 'tool', id: 't1', name: 'Read', input: { file_path: 'Makefile' } },
      { type: 'toolResult', id: 't1', isError: false },
      { type: 'tool', id: 't2', name: 'Bash', input: { command: 'make lint' } },
      { type: 'toolResult', id: 't2', isError: true, output: 'lint failed' },
      { type: 'text', text: 'I will remove the build directory.' },
      { type: 'permission', requestId: 'r1', tool: 'Bash', input: { command: 'rm -rf build' } },
    );
    return session.id;
  }

  it('output shows tool calls and the pending permission request (which tool, what input), not only text', async () => {
    await sessionAwaitingApproval();
    const out = await runTool(OPERATIONS, 'claude_output', { session: 'cleaner' }, rpc, services);
    assert.equal(out.isError, false);
    const body = out.text.split('\n').slice(1).join('\n');
    assert.equal(
      body,
      [
        'Looking at the build.',
        '🔧 Read — Makefile',
        '🔧 Bash — make lint (failed)',
        'I will remove the build directory.',
        '🔐 waiting for approval: 🔧 Bash — rm -rf build',
        '   input: {"command":"rm -rf build"}',
        '   reply yes to allow, anything else to deny',
      ].join('\n'),
    );
    const json = (await rpcMethods(OPERATIONS).get('sessions.output')?.call({ session: 'cleaner' }, rpc, services)) as {
      entries: ({ kind: string; seq: number } & Record<string, unknown>)[];
      lines: string[];
    };
    assert.deepEqual(
      json.entries.map((e) => e.kind),
      ['text', 'tool', 'tool', 'text', 'permission'],
    );
    const { seq, ...pending } = json.entries.at(-1) ?? { seq: 0 };
    assert.ok(seq > 0);
    assert.deepEqual(pending, {
      kind: 'permission',
      requestId: 'r1',
      tool: 'Bash',
      input: { command: 'rm -rf build' },
      state: 'pending',
    });
    assert.deepEqual(
      json.lines,
      ['Looking at the build.', 'I will remove the build directory.'],
      '`lines` keeps the text blocks',
    );
  });

  it('output --text keeps the text-only view', async () => {
    await sessionAwaitingApproval();
    const out = await runTool(OPERATIONS, 'claude_output', { session: 'cleaner', text: true }, rpc, services);
    assert.equal(out.text.split('\n').slice(1).join('\n'), 'Looking at the build.\nI will remove the build directory.');
  });

  it('an answered request is shown as allowed, and no longer pending', async () => {
    const id = await sessionAwaitingApproval();
    await f.manager.send(id, 'yes', { source: 'user' });
    const out = await runTool(OPERATIONS, 'claude_output', { session: 'cleaner' }, rpc, services);
    assert.match(out.text, /🔐 Bash: allowed$/);
    assert.doesNotMatch(out.text, /waiting for approval/);
  });

  it('show, sessions and sessions.get say which tool waits for approval', async () => {
    await sessionAwaitingApproval();
    const methods = rpcMethods(OPERATIONS);
    const got = (await methods.get('sessions.get')?.call({ session: 'cleaner' }, rpc, services)) as {
      waitingFor: string;
      pendingPermission: unknown;
    };
    assert.equal(got.waitingFor, 'permission');
    assert.deepEqual(got.pendingPermission, { tool: 'Bash', input: { command: 'rm -rf build' } });
    const listed = (await methods.get('sessions.list')?.call({}, rpc, services)) as {
      sessions: { pendingPermission: unknown }[];
    };
    assert.deepEqual(listed.sessions[0]?.pendingPermission, { tool: 'Bash', input: { command: 'rm -rf build' } });
    const show = await runTool(OPERATIONS, 'claude_sessions', {}, rpc, services);
    assert.match(show.text, /running, waiting for approval of Bash,/);
    assert.match(show.text, /\n {3}🔐 🔧 Bash — rm -rf build — reply yes to allow, anything else to deny/);
  });
});
