// The real daemon (its own wiring of the ApprovalDesk into the Linear integration) with a worker that asks for its
// tool: the reply in Linear is tied to the approval and the daemon is SIGKILLed before it decides it. After the restart
// the request is cancelled (and Linear told so, once), the delivery runs again and decides nothing, and the dispatch
// goes on to done.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Approval } from '../../src/approvals/approval.ts';
import { FAULT_ENV } from '../../src/core/fault.ts';
import { openDatabase } from '../../src/store/database.ts';
import { sqliteKysely } from '../../src/store/kysely/connection.ts';
import { LinearDeliveryStore } from '../../src/store/linear-deliveries.ts';
import type { DaemonProcess } from '../support/daemon-process.ts';
import { killDaemonProcess, startDaemonProcess } from '../support/daemon-process.ts';
import { unexpectedErrors } from '../support/e2e-daemon.ts';
import type { FakeLinear } from '../support/fake-linear.ts';
import { startFakeLinear } from '../support/fake-linear.ts';
import {
  addTeam,
  agentSessionCreated,
  agentSessionPrompted,
  linearDaemonConfig,
  postWebhook,
  replayRepo,
} from '../support/linear-e2e.ts';
import { tempDir } from '../support/temp-dir.ts';
import { waitFor } from '../support/wait-for.ts';

const STEP = 'linear.approvals.after-claim';

describe('a Linear approval reply across a SIGKILL between tying it to the request and deciding it', () => {
  const dir = tempDir('sb-linear-approvals-crash-');
  let fake: FakeLinear;
  const daemons: DaemonProcess[] = [];

  before(async () => {
    fake = await startFakeLinear();
  });
  after(async () => {
    for (const d of daemons.splice(0)) await killDaemonProcess(d);
    await fake.close();
    dir.remove();
  });

  it(
    'the request is cancelled by the restart, told once, and the re-run delivery decides nothing',
    {
      timeout: 180_000,
    },
    async () => {
      const team = addTeam(fake.workspace, 'OK');
      const home = join(dir.path, 'home');
      mkdirSync(home, { recursive: true });
      const config = linearDaemonConfig({
        dir: dir.path,
        repo: replayRepo(join(dir.path, 'repo')),
        linearUrl: fake.graphqlUrl,
        agentLog: join(dir.path, 'agents.jsonl'),
        originChannel: 'linear',
      });
      const linear = config.linear as { pipeline: Record<string, unknown> };
      linear.pipeline.workerPermissionMode = 'default';
      writeFileSync(join(home, 'config.json5'), JSON.stringify({ ...config, log: { level: 'warn' } }));

      const first = await startDaemonProcess(home, { [FAULT_ENV]: STEP });
      daemons.push(first);
      const issue = fake.workspace.addIssue({ teamId: team, title: 'Run a tool', description: 'Do it. [[tool]]' });
      const { payload, agentSessionId } = agentSessionCreated(fake.workspace, issue, 'go');
      assert.equal(await postWebhook(first.url, payload), 200);
      const activities = (type: string): string[] =>
        (fake.workspace.agentSessions.get(agentSessionId)?.activities ?? [])
          .map((a) => a.content)
          .filter((c) => c.type === type)
          .map((c) => String(c.body));
      const [approval] = await waitFor('the worker to ask', async () => {
        const { approvals } = await first.rpc<{ approvals: Approval[] }>('approvals.list', { status: 'pending' });
        return approvals.length > 0 ? approvals : undefined;
      });
      assert.ok(approval);
      await waitFor('the elicitation', () => activities('elicitation').length === 1);

      assert.equal(
        await postWebhook(first.url, agentSessionPrompted(fake.workspace, issue, agentSessionId, 'allow')),
        200,
      );
      const exit = await first.exited();
      assert.equal(exit.signal, 'SIGKILL', first.output());
      assert.match(first.output(), /fault injected at linear\.approvals\.after-claim/);

      const second = await startDaemonProcess(home);
      daemons.push(second);
      await waitFor('every delivery done', async () => {
        const db = openDatabase(join(home, 'state.db'));
        try {
          const counts = await new LinearDeliveryStore(sqliteKysely(db)).counts();
          return counts.pending + counts.processing === 0;
        } finally {
          db.close();
        }
      });
      await waitFor(
        'the dispatch done',
        async () => {
          const { dispatches } = await second.rpc<{ dispatches: { issue: string; status: string }[] }>(
            'linear.dispatches',
            {},
          );
          return dispatches.find((x) => x.issue === issue.identifier)?.status === 'done';
        },
        90_000,
      );
      const { approvals } = await second.rpc<{ approvals: Approval[] }>('approvals.list', {});
      const decided = approvals.find((a) => a.id === approval.id);
      assert.deepEqual([decided?.status, decided?.decidedBy], ['cancelled', 'restart'], 'the reply decided nothing');
      assert.ok(!approvals.some((a) => a.decidedBy?.startsWith('linear|')), 'no later request was decided by it');
      const told = activities('thought').filter((t) => t.includes(approval.id));
      assert.equal(told.length, 1, JSON.stringify(told));
      assert.match(told[0] ?? '', /cancelled: the daemon restarted/);
      assert.equal(activities('elicitation').length, 1);

      second.child.kill('SIGTERM');
      assert.equal((await second.exited()).code, 0, second.output());
      assert.deepEqual(unexpectedErrors(second.output()), []);
    },
  );
});
