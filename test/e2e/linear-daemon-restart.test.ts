// The real daemon process runs Linear (config pointing at the fake Linear server and the fake agents), is SIGKILLed in
// the middle of a dispatch — with a second webhook just acknowledged — and started again: every dispatch finishes
// exactly once, none is lost, and Linear hears each thing once.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DaemonProcess } from '../support/daemon-process.ts';
import { killDaemonProcess, startDaemonProcess } from '../support/daemon-process.ts';
import { unexpectedErrors } from '../support/e2e-daemon.ts';
import type { FakeLinear } from '../support/fake-linear.ts';
import { FAKE_IDS, startFakeLinear } from '../support/fake-linear.ts';
import {
  addTeam,
  agentSessionCreated,
  delegated,
  linearDaemonConfig,
  postWebhook,
  replayRepo,
} from '../support/linear-e2e.ts';
import { tempDir } from '../support/temp-dir.ts';
import { waitFor } from '../support/wait-for.ts';

interface DispatchView {
  id: string;
  issue: string;
  status: string;
  attempt: number;
  agentSessionId: string | null;
}
interface SessionView {
  id: string;
  name: string;
  status: string;
}

describe('SIGKILL of the daemon mid-pipeline, then a restart', { timeout: 180_000 }, () => {
  const dir = tempDir('sb-linear-restart-');
  const home = join(dir.path, 'home');
  let fake: FakeLinear;
  let daemon: DaemonProcess | undefined;
  const outputs: string[] = [];

  before(async () => {
    mkdirSync(home, { recursive: true });
    fake = await startFakeLinear();
    const repo = replayRepo(join(dir.path, 'repo'));
    // No chat connector in this test: the pipeline's notifications only go to the log (originChannel `linear`).
    const config = {
      ...linearDaemonConfig({
        dir: dir.path,
        repo,
        linearUrl: fake.graphqlUrl,
        agentLog: join(dir.path, 'agents.jsonl'),
        originChannel: 'linear',
      }),
      log: { level: 'warn' },
    };
    writeFileSync(join(home, 'config.json5'), JSON.stringify(config));
  });

  after(async () => {
    await killDaemonProcess(daemon);
    await fake.close();
    dir.remove();
  });

  it('finishes every dispatch exactly once: none doubled, none lost', async () => {
    const ws = fake.workspace;
    const team = addTeam(ws, 'OK');
    const one = ws.addIssue({
      teamId: team,
      title: 'Add a greeting',
      description: 'Add a greeting to the README. [[sleep:3000]]',
    });
    const two = ws.addIssue({ teamId: team, title: 'Add a farewell', description: 'Add a farewell to the README.' });
    two.delegateId = FAKE_IDS.appUser;

    daemon = await startDaemonProcess(home);
    const { payload, agentSessionId } = agentSessionCreated(ws, one, '@switchboard please do this');
    assert.equal(await postWebhook(daemon.url, payload, 'delivery-one'), 200);
    const d = daemon;
    // The worker of OK-1 is running (it sleeps before answering).
    await waitFor('the OK-1 worker to run', async () => {
      const list = await d.rpc<{ sessions: SessionView[] }>('sessions.list', {});
      return list.sessions.some((s) => s.name.startsWith('ok-1-worker') && s.status === 'running');
    });
    // A second webhook is acknowledged, and the daemon dies right after: before or while it is handled.
    assert.equal(await postWebhook(daemon.url, delegated(two), 'delivery-two'), 200);
    daemon.child.kill('SIGKILL');
    assert.equal((await daemon.exited()).signal, 'SIGKILL');
    outputs.push(daemon.output());

    // Linear redelivers the first webhook after the restart: it must not start anything new.
    daemon = await startDaemonProcess(home);
    const again = daemon;
    assert.equal(await postWebhook(again.url, payload, 'delivery-one'), 200);
    const done = await waitFor(
      'both dispatches done',
      async () => {
        const result = await again.rpc<{ dispatches: DispatchView[] }>('linear.dispatches', {});
        return result.dispatches.length === 2 && result.dispatches.every((x) => x.status === 'done')
          ? result.dispatches
          : undefined;
      },
      120_000,
    );
    assert.deepEqual(done.map((x) => x.issue).sort(), ['OK-1', 'OK-2'], 'one dispatch per issue');
    // `done` is recorded before the summary is posted and the issue moved to Done: wait for those too.
    await waitFor(
      'both issues Done in Linear',
      () => ws.states.get(one.stateId)?.name === 'Done' && ws.states.get(two.stateId)?.name === 'Done',
      30_000,
    );

    // OK-1: its worker was resumed in place (one worker session), and Linear heard the start and the end once.
    const sessions = (await again.rpc<{ sessions: SessionView[] }>('sessions.list', {})).sessions;
    assert.equal(
      sessions.filter((s) => s.name.startsWith('ok-1-worker')).length,
      1,
      'the interrupted worker was resumed, not doubled',
    );
    const activities = ws.agentSessions.get(agentSessionId)?.activities.map((a) => a.content) ?? [];
    assert.equal(activities.filter((a) => a.type === 'thought' && String(a.body).startsWith('Picked up')).length, 1);
    assert.equal(activities.filter((a) => a.type === 'response').length, 1);
    // OK-2: the acknowledged assignment was not lost, and got one agent session.
    assert.equal(fake.mutations.filter((m) => m.name === 'agentSessionCreateOnIssue').length, 1);

    again.child.kill('SIGTERM');
    assert.equal((await again.exited()).code, 0, again.output());
    outputs.push(again.output());
    const errors = outputs.flatMap((o) => unexpectedErrors(o));
    assert.deepEqual(errors, [], 'no unexpected error lines');
  });
});
