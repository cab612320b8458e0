import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { managerPerTest } from '../../test/support/manager-fixture.ts';
import type { PullRequestRequest, PullRequestResult } from '../github/pull-requests.ts';
import type { SessionPullRequests } from '../github/pull-requests.ts';
import { runCommand } from './commands.ts';
import type { Caller, OperationServices } from './operation.ts';
import { OPERATIONS } from './table.ts';
import { runTool } from './tools.ts';

const chat: Caller = { kind: 'chat', channel: 'telegram|42', userId: '42' };
const agent: Caller = { kind: 'agent', sessionId: 'eng-1', channel: 'telegram|42' };

describe('session_pr', () => {
  const { f } = managerPerTest();
  let services: OperationServices;
  let asked: PullRequestRequest[];

  const endTurn = () =>
    f.harness.last.emit(
      { type: 'started', backendSessionId: 'b' },
      { type: 'text', text: 'Fixed the test.' },
      { type: 'turnEnd', outcome: { ok: true }, costUsd: 0.01 },
    );

  beforeEach(() => {
    asked = [];
    const pullRequests = {
      open: (request: PullRequestRequest): Promise<PullRequestResult> => {
        asked.push(request);
        return Promise.resolve({
          number: 4,
          url: 'https://github.example/acme/widgets/pull/4',
          repo: 'acme/widgets',
          branch: 'switchboard/fixer',
          base: 'main',
          committed: request.title ?? 'fix the test',
          outcome: asked.length === 1 ? 'opened' : 'existing',
        });
      },
    } as Pick<SessionPullRequests, 'open'> as SessionPullRequests;
    services = {
      config: f.config,
      sessions: f.manager,
      clock: f.clock,
      github: { pullRequests, pageBase: () => 'http://127.0.0.1:7777' },
    };
  });

  it('answers the PR from a chat command, with the title from the rest of the line', async () => {
    await runCommand(OPERATIONS, `/claude --name fixer --workdir ${f.workdir} fix the test`, chat, services);
    const working = (await runCommand(OPERATIONS, '/claude_pr fixer', chat, services)) ?? '';
    assert.match(working, /still working/, 'not while a turn runs');
    assert.equal(asked.length, 0);
    await endTurn();
    const reply = (await runCommand(OPERATIONS, '/claude_pr fixer Better title here', chat, services)) ?? '';
    assert.match(reply, /Pull request #4 opened/);
    assert.match(reply, /https:\/\/github\.example\/acme\/widgets\/pull\/4/);
    assert.equal(asked[0]?.title, 'Better title here');
    assert.equal(asked[0]?.workdir, f.workdir);
    assert.equal(asked[0]?.session.prompt, 'fix the test');
    assert.equal(asked[0]?.session.pageBase, 'http://127.0.0.1:7777');
    assert.deepEqual(asked[0]?.session.lastOutput, ['Fixed the test.']);
    const again = (await runCommand(OPERATIONS, '/claude_pr fixer', chat, services)) ?? '';
    assert.match(again, /#4 \(opened before\)/);
  });

  it('passes draft and base from the tool, and is unavailable without the GitHub integration', async () => {
    await runCommand(OPERATIONS, `/claude --name fixer --workdir ${f.workdir} fix the test`, chat, services);
    await endTurn();
    const result = await runTool(
      OPERATIONS,
      'claude_pr',
      { session: 'fixer', draft: true, base: 'dev' },
      agent,
      services,
    );
    assert.equal(result.isError, false, result.text);
    assert.equal(asked[0]?.draft, true);
    assert.equal(asked[0]?.base, 'dev');
    const { github: _unused, ...without } = services;
    const reply = (await runCommand(OPERATIONS, '/claude_pr fixer', chat, without)) ?? '';
    assert.match(reply, /github\.enabled is false/);
  });
});
