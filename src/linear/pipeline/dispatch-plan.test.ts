import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { makeIssue } from '../../../test/support/fake-linear-api.ts';
import { linearPipelineSchema } from '../../core/config-linear-pipeline.ts';
import { newDispatchRow, planDispatch } from './dispatch-plan.ts';

const config = { defaultHarness: 'claude' as const, defaultWorkdir: undefined };

describe('planDispatch', () => {
  it("takes the team's repository first, then linear.pipeline.repo, then defaultWorkdir", () => {
    const pc = linearPipelineSchema.parse({ repo: '/srv/all', teamRepos: { ENG: '/srv/eng' } });
    assert.equal(planDispatch(makeIssue({ identifier: 'ENG-1' }), undefined, { pc, config }).repoPath, '/srv/eng');
    assert.equal(planDispatch(makeIssue({ identifier: 'OPS-1' }), undefined, { pc, config }).repoPath, '/srv/all');
    const bare = linearPipelineSchema.parse({});
    const plan = planDispatch(makeIssue({ identifier: 'OPS-1' }), undefined, {
      pc: bare,
      config: { ...config, defaultWorkdir: 'work/repo' },
    });
    assert.equal(plan.repoPath, resolve('work/repo'));
  });

  it('refuses a team without a repository (invalid_input naming the key)', () => {
    const pc = linearPipelineSchema.parse({});
    assert.throws(
      () => planDispatch(makeIssue({ identifier: 'OPS-1' }), undefined, { pc, config }),
      (error: Error) => error.message.includes('linear.pipeline.teamRepos.OPS'),
    );
  });

  it("picks the runners from a harness label over the profile's", () => {
    const pc = linearPipelineSchema.parse({ repo: '/srv/all', profiles: { fast: { harness: 'gemini' } } });
    const issue = makeIssue({ identifier: 'ENG-2', labels: [{ id: 'l', name: 'harness:codex' }] });
    assert.equal(planDispatch(issue, 'fast', { pc, config }).runners.worker.harness, 'codex');
    assert.equal(
      planDispatch(makeIssue({ identifier: 'ENG-3' }), 'fast', { pc, config }).runners.worker.harness,
      'gemini',
    );
  });
});

describe('newDispatchRow', () => {
  it("keeps the request's texts (capped) and says what was picked", () => {
    const pc = linearPipelineSchema.parse({ repo: '/srv/all', promptInputMaxChars: 10 });
    const issue = makeIssue({ identifier: 'ENG-4', branchName: '  ' });
    const plan = planDispatch(issue, undefined, { pc, config });
    const ctx = { prompt: ' do it ', promptId: 'p1', guidance: ['be brief'], promptContext: 'x'.repeat(50) };
    const row = newDispatchRow({ id: 'd1', issue, ctx, plan, agentSessionId: null, pc, now: 42 });
    assert.equal(row.branch, 'eng-4');
    assert.equal(row.createdAt, 42);
    assert.equal(row.agentSessionId, null);
    assert.deepEqual(row.context.promptIds, ['p1']);
    assert.equal(row.context.promptContext, `${'x'.repeat(10)}\n[… cut: 40 more characters]`);
    assert.deepEqual(row.context.userMessages, [' do it ']);
    assert.match(row.context.pickedUp ?? '', /^Picked up ENG-4: tier junior/);
  });
});
