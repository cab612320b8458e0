import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { PipelineFixture } from '../../../test/support/pipeline-fixture.ts';
import { pipelineFixture } from '../../../test/support/pipeline-fixture.ts';
import { PLANNING_BLOCK_MESSAGE } from '../planner/planner.ts';
import { createPipeline } from './pipeline.ts';
import { DispatchBlockedError } from './types.ts';

describe('Pipeline guard (planning mode)', () => {
  let f: PipelineFixture | undefined;
  afterEach(async () => {
    await f?.close();
    f = undefined;
  });

  it('refuses to dispatch an issue the guard blocks, tells the agent session (or the issue) why, and records nothing', async () => {
    f = await pipelineFixture({ scripted: true });
    const planned = new Set(['proj-1']);
    const pipeline = createPipeline({
      ...f.deps,
      guard: { isBlocked: (issue) => (issue.project && planned.has(issue.project.id) ? PLANNING_BLOCK_MESSAGE : null) },
    });
    await pipeline.start();
    try {
      f.linear.addIssue({ identifier: 'OK-1', project: { id: 'proj-1', name: 'Launch' } });
      f.linear.addIssue({ identifier: 'OK-2', project: { id: 'proj-1', name: 'Launch' } });
      await assert.rejects(
        pipeline.dispatch('OK-1', { agentSessionId: 'as-1' }),
        (error: unknown) => error instanceof DispatchBlockedError && error.message === PLANNING_BLOCK_MESSAGE,
      );
      assert.deepEqual(f.linear.activitiesOf('as-1'), [{ type: 'response', body: PLANNING_BLOCK_MESSAGE }]);
      await assert.rejects(pipeline.dispatch('OK-2'), DispatchBlockedError);
      assert.deepEqual(
        f.linear.comments.map((c) => [c.issueId, c.body]),
        [['issue-ok-2', PLANNING_BLOCK_MESSAGE]],
      );
      assert.deepEqual(await pipeline.list(), [], 'no dispatch recorded');
      assert.equal(f.linear.createdAgentSessions.length, 0);
      // Once the plan is finalized, the same issue dispatches.
      planned.delete('proj-1');
      assert.equal((await pipeline.dispatch('OK-1', { agentSessionId: 'as-1' })).outcome, 'started');
      await pipeline.onStop('as-1', 'stop:t1');
    } finally {
      await pipeline.stop();
    }
  });
});
