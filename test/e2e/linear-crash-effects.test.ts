// The real daemon, SIGKILLed by a fault point inside the window between an effect on Linear and the commit that
// records it (SWITCHBOARD_FAULT), then started again: the delivery runs again (at least once) but Linear hears each
// thing once — no second stop answer, no second copy of a prompt.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { FAULT_ENV } from '../../src/core/fault.ts';
import { openDatabase } from '../../src/store/database.ts';
import { sqliteKysely } from '../../src/store/kysely/connection.ts';
import { LinearDeliveryStore } from '../../src/store/linear-deliveries.ts';
import { DispatchStore } from '../../src/store/linear-dispatches.ts';
import type { DaemonProcess } from '../support/daemon-process.ts';
import { killDaemonProcess, startDaemonProcess } from '../support/daemon-process.ts';
import { unexpectedErrors } from '../support/e2e-daemon.ts';
import type { FakeLinear } from '../support/fake-linear.ts';
import { FAKE_IDS, startFakeLinear } from '../support/fake-linear.ts';
import type { FakeIssue } from '../support/fake-linear-workspace.ts';
import {
  addTeam,
  agentSessionCreated,
  agentSessionPrompted,
  agentSessionStop,
  delegated,
  linearDaemonConfig,
  postWebhook,
  replayRepo,
} from '../support/linear-e2e.ts';
import { tempDir } from '../support/temp-dir.ts';
import { waitFor } from '../support/wait-for.ts';

interface SessionView {
  name: string;
  status: string;
}

describe('Linear effects across a SIGKILL between the effect and its commit', { timeout: 180_000 }, () => {
  const dir = tempDir('sb-linear-crash-effects-');
  let fake: FakeLinear;
  let team: string;
  let n = 0;
  const daemons: DaemonProcess[] = [];

  before(async () => {
    fake = await startFakeLinear();
    team = addTeam(fake.workspace, 'OK');
  });
  afterEach(async () => {
    for (const d of daemons.splice(0)) await killDaemonProcess(d);
  });
  after(async () => {
    await fake.close();
    dir.remove();
  });

  /** A fresh daemon home wired to the fake Linear. */
  function home(): string {
    n += 1;
    const path = join(dir.path, `home-${n}`);
    mkdirSync(path, { recursive: true });
    const repo = replayRepo(join(dir.path, `repo-${n}`));
    const config = {
      ...linearDaemonConfig({
        dir: dir.path,
        repo,
        linearUrl: fake.graphqlUrl,
        agentLog: join(dir.path, `agents-${n}.jsonl`),
        originChannel: 'linear',
      }),
      log: { level: 'warn' },
    };
    writeFileSync(join(path, 'config.json5'), JSON.stringify(config));
    return path;
  }

  async function start(path: string, fault?: string): Promise<DaemonProcess> {
    const d = await startDaemonProcess(path, fault ? { [FAULT_ENV]: fault } : {});
    daemons.push(d);
    return d;
  }

  /** Starts a dispatch whose worker sleeps, and waits until the worker runs. */
  async function working(d: DaemonProcess): Promise<{ issue: FakeIssue; agentSessionId: string }> {
    const issue = fake.workspace.addIssue({
      teamId: team,
      title: 'Add a greeting',
      description: 'Add a greeting to the README. [[sleep:20000]]',
    });
    const { payload, agentSessionId } = agentSessionCreated(fake.workspace, issue, '@switchboard please do this');
    assert.equal(await postWebhook(d.url, payload), 200);
    await waitFor('the worker to run', async () => {
      const list = await d.rpc<{ sessions: SessionView[] }>('sessions.list', {});
      return list.sessions.some(
        (s) => s.name.startsWith(`${issue.identifier.toLowerCase()}-worker`) && s.status === 'running',
      );
    });
    return { issue, agentSessionId };
  }

  async function killedBy(d: DaemonProcess, step: string): Promise<void> {
    const exit = await Promise.race([
      d.exited(),
      new Promise<never>((_, reject) =>
        setTimeout(
          () =>
            reject(
              new Error(
                `not killed at ${step}: ${JSON.stringify([...fake.workspace.agentSessions.values()].map((s) => s.activities))}\n${d.output()}`,
              ),
            ),
          30_000,
        ).unref(),
      ),
    ]);
    assert.equal(exit.signal, 'SIGKILL', d.output());
    assert.match(d.output(), new RegExp(`fault injected at ${step.replace(/[.:]/g, '\\$&')}`));
  }

  /** Waits until every delivery the daemon at `path` took in is finished (the re-run after the restart included). */
  async function deliveriesDone(path: string): Promise<void> {
    await waitFor('every delivery done', async () => {
      const db = openDatabase(join(path, 'state.db'));
      try {
        const counts = await new LinearDeliveryStore(sqliteKysely(db)).counts();
        return counts.pending + counts.processing === 0 && counts.done > 0;
      } finally {
        db.close();
      }
    });
  }

  function responses(agentSessionId: string): string[] {
    const list = fake.workspace.agentSessions.get(agentSessionId)?.activities.map((a) => a.content) ?? [];
    return list.filter((a) => a.type === 'response').map((a) => String(a.body));
  }

  async function stopCleanly(d: DaemonProcess): Promise<void> {
    d.child.kill('SIGTERM');
    assert.equal((await d.exited()).code, 0, d.output());
  }

  it('a stop delivery run again after a kill between its answer and "done" answers once', async () => {
    const path = home();
    const first = await start(path, 'linear.worker.after-handle@2');
    const { issue, agentSessionId } = await working(first);
    assert.equal(await postWebhook(first.url, agentSessionStop(fake.workspace, issue, agentSessionId)), 200);
    await killedBy(first, 'linear.worker.after-handle');
    assert.equal(responses(agentSessionId).length, 1, 'the stop was answered before the kill');

    const second = await start(path);
    await deliveriesDone(path);
    assert.deepEqual(responses(agentSessionId), [responses(agentSessionId)[0]]);
    assert.match(responses(agentSessionId)[0] ?? '', /^Stopped work on/);
    await stopCleanly(second);
    assert.deepEqual(unexpectedErrors(second.output()), []);
  });

  it('a stop whose answer reached Linear just before the kill (not yet recorded) answers once', async () => {
    const path = home();
    const first = await start(path, 'linear.effect.after-send:response');
    const { issue, agentSessionId } = await working(first);
    assert.equal(await postWebhook(first.url, agentSessionStop(fake.workspace, issue, agentSessionId)), 200);
    await killedBy(first, 'linear.effect.after-send:response');
    assert.equal(responses(agentSessionId).length, 1, 'the answer reached Linear before the kill');

    const second = await start(path);
    await deliveriesDone(path);
    assert.equal(responses(agentSessionId).length, 1, `one answer: ${JSON.stringify(responses(agentSessionId))}`);
    await stopCleanly(second);
    assert.deepEqual(unexpectedErrors(second.output()), []);
  });

  it('a prompt run again after a kill between taking it in and "done" is taken in once', async () => {
    const path = home();
    const first = await start(path, 'linear.router.after-prompt');
    const { issue, agentSessionId } = await working(first);
    assert.equal(
      await postWebhook(
        first.url,
        agentSessionPrompted(fake.workspace, issue, agentSessionId, 'Also greet in French.'),
      ),
      200,
    );
    await killedBy(first, 'linear.router.after-prompt');

    const second = await start(path);
    await deliveriesDone(path);
    const db = openDatabase(join(path, 'state.db'));
    try {
      const d = await new DispatchStore(sqliteKysely(db)).latestForAgentSession(agentSessionId);
      assert.deepEqual(
        d?.context.userMessages?.filter((m) => m === 'Also greet in French.'),
        ['Also greet in French.'],
      );
    } finally {
      db.close();
    }
    await stopCleanly(second);
    assert.deepEqual(unexpectedErrors(second.output()), []);
  });

  it('an assignment run again after a kill between creating its agent session and recording it creates no second session', async () => {
    const path = home();
    const first = await start(path, 'linear.router.after-agent-session');
    const issue = fake.workspace.addIssue({
      teamId: team,
      title: 'Add a farewell',
      description: 'Add a farewell to the README. [[sleep:20000]]',
    });
    issue.delegateId = FAKE_IDS.appUser;
    assert.equal(await postWebhook(first.url, delegated(issue)), 200);
    await killedBy(first, 'linear.router.after-agent-session');

    const second = await start(path);
    await deliveriesDone(path);
    const created = fake.mutations.filter(
      (m) => m.name === 'agentSessionCreateOnIssue' && JSON.stringify(m.variables).includes(issue.id),
    );
    assert.equal(created.length, 1, 'one agent session for the assignment');
    const dispatches = (
      await second.rpc<{ dispatches: { issue: string }[] }>('linear.dispatches', {})
    ).dispatches.filter((x) => x.issue === issue.identifier);
    assert.equal(dispatches.length, 1, 'one dispatch');
    await stopCleanly(second);
    assert.deepEqual(unexpectedErrors(second.output()), []);
  });

  /** Runs a created event under `fault`, restarts, and waits for the dispatch to be done; returns the session's activities. */
  async function createdAcrossKill(fault: string): Promise<Record<string, unknown>[]> {
    const path = home();
    const first = await start(path, fault);
    const issue = fake.workspace.addIssue({
      teamId: team,
      title: 'Add a greeting',
      description: 'Add a greeting to the README.',
    });
    const { payload, agentSessionId } = agentSessionCreated(fake.workspace, issue, '@switchboard please do this');
    assert.equal(await postWebhook(first.url, payload), 200);
    await killedBy(first, fault);
    const second = await start(path);
    await waitFor(
      'the dispatch done',
      async () => {
        const list = (
          await second.rpc<{ dispatches: { issue: string; status: string }[] }>('linear.dispatches', {})
        ).dispatches.filter((x) => x.issue === issue.identifier);
        return list.length === 1 && list[0]?.status === 'done';
      },
      60_000,
    );
    await deliveriesDone(path);
    const dispatches = (
      await second.rpc<{ dispatches: { issue: string }[] }>('linear.dispatches', {})
    ).dispatches.filter((x) => x.issue === issue.identifier);
    assert.equal(dispatches.length, 1, 'one dispatch');
    await stopCleanly(second);
    assert.deepEqual(unexpectedErrors(second.output()), []);
    return fake.workspace.agentSessions.get(agentSessionId)?.activities.map((a) => a.content) ?? [];
  }

  const pickedUp = (activities: Record<string, unknown>[]) =>
    activities.filter((a) => a.type === 'thought' && String(a.body).startsWith('Picked up'));

  it('a created event run again after a kill between recording its dispatch and saying so says "Picked up" once (not zero times)', async () => {
    const activities = await createdAcrossKill('linear.pipeline.after-insert');
    assert.equal(pickedUp(activities).length, 1, JSON.stringify(activities));
    assert.equal(activities.filter((a) => a.type === 'response').length, 1);
  });

  it('a created event whose "Picked up" reached Linear just before the kill says it once', async () => {
    const activities = await createdAcrossKill('linear.effect.after-send:picked-up');
    assert.equal(pickedUp(activities).length, 1, JSON.stringify(activities));
    assert.equal(activities.filter((a) => a.type === 'response').length, 1);
  });
});
