// One agent session, one piece of work, over the real webhook route with signed deliveries and the real pipeline:
// Linear sending `created` again long after (under a new delivery id) starts nothing, and an empty prompt is ignored.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { LinearE2E } from '../support/linear-e2e.ts';
import { agentSessionCreated, agentSessionPrompted, linearE2E } from '../support/linear-e2e.ts';
import { waitFor } from '../support/wait-for.ts';

let rigs: LinearE2E[] = [];
afterEach(async () => {
  for (const r of rigs) await r.close();
  rigs = [];
});

/** A rig with one agent session whose dispatch ran to done; returns the rig, the issue and the session. */
async function finishedSession() {
  const r = await linearE2E();
  rigs.push(r);
  const issue = r.ws.addIssue({
    teamId: r.teams.OK,
    title: 'Add a greeting',
    description: 'Add a greeting to the README.',
    estimate: 1,
  });
  const { payload, agentSessionId } = agentSessionCreated(r.ws, issue, '@switchboard please do this');
  assert.equal(await r.post(payload, 'delivery-first'), 200);
  await waitFor(
    'the dispatch to be done',
    async () => (await r.linear.pipeline.get(issue.id))?.status === 'done',
    90_000,
  );
  await r.linear.pipeline.idle();
  return { r, issue, payload, agentSessionId, before: r.activities(agentSessionId).length };
}

/** Nothing more happened: still one dispatch, done, and no new activity in the session. */
async function assertUntouched(r: LinearE2E, agentSessionId: string, before: number): Promise<void> {
  const dispatches = await r.linear.pipeline.list();
  assert.equal(dispatches.length, 1, 'one dispatch for the agent session');
  assert.equal(dispatches[0]?.status, 'done', 'the finished dispatch was not reopened');
  const activities = r.activities(agentSessionId);
  assert.equal(
    activities.length,
    before,
    `nothing more was said in the session: ${JSON.stringify(activities.slice(before))}`,
  );
  assert.equal(activities.filter((a) => a.type === 'thought' && String(a.body).startsWith('Picked up')).length, 1);
  assert.equal(activities.filter((a) => a.type === 'response').length, 1);
}

describe('Linear: one agent session, one piece of work', { timeout: 120_000 }, () => {
  it('a created event delivered again under a new delivery id after its dispatch finished starts nothing', async () => {
    const { r, payload, agentSessionId, before } = await finishedSession();
    // Linear retries the same event much later: re-signed (new timestamp), new linear-delivery id.
    assert.equal(await r.post(payload, 'delivery-retry-much-later'), 200);
    await r.linear.webhooks.worker.idle();
    await r.linear.pipeline.idle();
    await assertUntouched(r, agentSessionId, before);
  });

  it('a prompt with an empty body is acknowledged and ignored (it does not reopen the dispatch)', async () => {
    const { r, issue, agentSessionId, before } = await finishedSession();
    assert.equal(await r.post(agentSessionPrompted(r.ws, issue, agentSessionId, '   ')), 200);
    await r.linear.webhooks.worker.idle();
    await r.linear.pipeline.idle();
    await assertUntouched(r, agentSessionId, before);
  });
});
