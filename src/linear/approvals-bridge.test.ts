import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { dispatchRecord } from '../../test/support/dispatch-record.ts';
import type { Approval } from '../approvals/approval.ts';
import { ApprovalDesk } from '../approvals/desk.ts';
import type { PermissionAsk } from '../coding/permission-gate.ts';
import { ManualClock } from '../core/clock.ts';
import { approvalsSchema } from '../core/config-approvals.ts';
import { silentLogger } from '../core/logger.ts';
import { LinearClaimStore } from '../store/linear-claims.ts';
import type { DispatchPhase, DispatchSession } from '../store/linear-dispatch-types.ts';
import type { ActivityContent } from './api/types.ts';
import type { LinearApprovalDesk } from './approvals-bridge.ts';
import { LinearApprovals } from './approvals-bridge.ts';

function ask(sessionId: string, command: string): PermissionAsk {
  return {
    sessionId,
    sessionName: `${sessionId}-name`,
    workdir: '/repo/wt',
    requestId: `r-${command}`,
    tool: 'Bash',
    input: { command },
  };
}

describeEachDatabase('LinearApprovals', (fresh) => {
  /** `wrap` stands between the bridge and the desk (to make a race happen). */
  async function bridge(wrap: (desk: ApprovalDesk) => LinearApprovalDesk = (desk) => desk) {
    const { db } = await fresh();
    const clock = new ManualClock(1_000);
    const desk = new ApprovalDesk({
      db,
      clock,
      logger: silentLogger(),
      config: approvalsSchema.parse({}),
      rootOf: () => '/repo',
    });
    let d = dispatchRecord({ agentSessionId: 'as1' });
    const rows = new Map<string, DispatchSession>();
    const map = (sessionId: string, phase: DispatchPhase): void => {
      rows.set(sessionId, {
        seq: rows.size + 1,
        sessionId,
        dispatchId: d.id,
        phase,
        attempt: 1,
        try: 1,
        startedAt: 0,
        endCause: null,
        endedAt: null,
      });
    };
    const told: { content: ActivityContent; key: string }[] = [];
    const claims = new LinearClaimStore(db);
    const linear = new LinearApprovals({
      desk: wrap(desk),
      store: {
        session: async (id) => rows.get(id) ?? null,
        get: async (id) => (id === d.id ? d : null),
        latestForAgentSession: async (id) => (id === d.agentSessionId ? d : null),
        currentSession: async () => [...rows.values()].at(-1) ?? null,
      },
      reporter: {
        tellOnce: async (_d, content, key) => {
          if (!told.some((t) => t.key === key)) told.push({ content, key });
        },
      },
      claims,
      clock,
      logger: silentLogger(),
    });
    const pending = async (sessionId: string, command: string): Promise<Approval> => {
      const approval = await desk.ask(ask(sessionId, command), () => {});
      await linear.idle();
      return approval;
    };
    const finish = (): void => {
      d = { ...d, status: 'stopped' };
    };
    return { desk, linear, map, told, claims, clock, pending, finish };
  }

  it("posts a worker's request as an elicitation and its outcome as a thought, once each, in order", async () => {
    const { desk, linear, map, told, pending } = await bridge();
    map('audit-1', 'audit');
    await pending('audit-1', 'cat x');
    assert.equal(told.length, 0, "an auditor's request is not posted");
    map('worker-1', 'worker');
    const approval = await pending('worker-1', 'npm test');
    await desk.decide({ id: approval.id, decision: 'deny', message: 'not now', by: 'cli' });
    await linear.idle();
    assert.deepEqual(
      told.map((t) => [t.key, t.content.type]),
      [
        [`approval:${approval.id}/request`, 'elicitation'],
        [`approval:${approval.id}/outcome`, 'thought'],
      ],
    );
    assert.match((told[1]?.content as { body: string }).body, /denied by cli: not now$/);
  });

  it('says nothing more once the dispatch has ended (a stop cancels the request of the worker it kills)', async () => {
    const { desk, linear, map, told, pending, finish } = await bridge();
    map('worker-1', 'worker');
    const approval = await pending('worker-1', 'npm test');
    finish();
    await desk.cancelSession('worker-1', 'The session ended before anyone answered.');
    await linear.idle();
    assert.deepEqual(
      told.map((t) => t.key),
      [`approval:${approval.id}/request`],
    );
  });

  it('posts a request made before the worker was mapped once it is', async () => {
    const { linear, map, told, pending } = await bridge();
    const approval = await pending('worker-1', 'npm test');
    assert.equal(told.length, 0);
    map('worker-1', 'worker');
    linear.workerStarted('worker-1');
    await linear.idle();
    assert.deepEqual(
      told.map((t) => t.key),
      [`approval:${approval.id}/request`],
    );
  });

  it('a reply decides the pending request once; its redelivery decides neither it nor a later one', async () => {
    const { desk, linear, map, pending, claims, clock } = await bridge();
    map('worker-1', 'worker');
    const reply = { agentSessionId: 'as1', key: 'prompt:act1', text: 'allow for session', by: 'linear|Ada' };
    assert.equal(await linear.reply({ ...reply, key: 'prompt:act0' }), false, 'nothing pending: an ordinary prompt');
    const first = await pending('worker-1', 'npm test');
    assert.equal(await linear.reply(reply), true);
    const [decided] = await desk.list({ status: 'allowed' });
    assert.deepEqual([decided?.id, decided?.scope, decided?.decidedBy], [first.id, 'session', 'linear|Ada']);

    const second = await pending('worker-1', 'rm -rf build');
    assert.equal(await linear.reply(reply), true, 'the redelivery is still an approval reply');
    assert.equal((await desk.pendingFor('worker-1'))?.id, second.id, 'the later request is left alone');

    await claims.claim('prompt:act2', 'pipeline', clock.now());
    assert.equal(await linear.reply({ ...reply, key: 'prompt:act2' }), false, 'a prompt taken by the pipeline');
    assert.equal(await linear.reply({ ...reply, key: 'prompt:act3', text: 'deny: not that' }), true);
    const [denied] = await desk.list({ status: 'denied' });
    assert.deepEqual([denied?.id, denied?.message], [second.id, 'not that']);
  });

  it('a reply tied to its request before a crash decides it when the delivery runs again', async () => {
    const { desk, linear, map, pending, claims } = await bridge();
    map('worker-1', 'worker');
    const approval = await pending('worker-1', 'npm test');
    await claims.claim('prompt:act1', `approval:${approval.id}`, 0);
    const reply = { agentSessionId: 'as1', key: 'prompt:act1', text: 'always', by: 'linear|Ada' };
    assert.equal(await linear.reply(reply), true);
    const [decided] = await desk.list({ status: 'allowed' });
    assert.deepEqual([decided?.id, decided?.scope, decided?.decidedBy], [approval.id, 'always', 'linear|Ada']);
  });

  it('a reply that lost the race to another surface is told what was decided', async () => {
    const { desk, linear, map, told, pending } = await bridge((real) => ({
      on: (listener) => real.on(listener),
      pendingFor: (sessionId) => real.pendingFor(sessionId),
      answerText: (id, text, by) => real.answerText(id, text, by),
      // The web page decides first, between the bridge's look-up and its decision.
      decide: async (input) => {
        await real.decide({ id: input.id, decision: 'deny', by: 'web' });
        return real.decide(input);
      },
    }));
    map('worker-1', 'worker');
    const approval = await pending('worker-1', 'npm test');
    assert.equal(
      await linear.reply({ agentSessionId: 'as1', key: 'prompt:act1', text: 'allow', by: 'linear|Bo' }),
      true,
    );
    await linear.idle();
    assert.equal((await desk.list({ status: 'denied' }))[0]?.decidedBy, 'web');
    const note = told.find((t) => t.key === 'prompt:act1/approval');
    assert.match(
      (note?.content as { body: string } | undefined)?.body ?? '',
      new RegExp(`^Approval ${approval.id} was already decided: .* denied by web`),
    );
  });
});
