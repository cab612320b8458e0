// Linear dispatches across three real daemon processes on one PostgreSQL: a prompt and a stop taken by the intake reach
// the worker on the node that runs it; the repository is in the workspaces of alpha and beta only, so every dispatch runs on one
// of them (whichever node holds the webhook intake); `maxConcurrent` holds across
// the nodes (the third dispatch waits, then starts when one ends); a dispatch no node can run is refused at once; and
// when the node running a worker is SIGKILLed, the dispatch finishes on the other one — Linear hears one "Picked up"
// and one final response per agent session, nothing twice.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { holderOf } from '../support/cluster-load.ts';
import type { ClusterRig } from '../support/cluster-rig.ts';
import { startClusterRig } from '../support/cluster-rig.ts';
import { unexpectedErrors } from '../support/e2e-daemon.ts';
import type { FakeLinear } from '../support/fake-linear.ts';
import { startFakeLinear } from '../support/fake-linear.ts';
import type { FakeIssue } from '../support/fake-linear-workspace.ts';
import {
  addTeam,
  agentSessionCreated,
  agentSessionPrompted,
  agentSessionStop,
  linearDaemonConfig,
  postWebhook,
  replayRepo,
} from '../support/linear-e2e.ts';
import { postgresSkip } from '../support/postgres.ts';
import { tempDir } from '../support/temp-dir.ts';
import { waitFor } from '../support/wait-for.ts';

interface DispatchView {
  id: string;
  issue: string;
  status: string;
  node: string | null;
  agentSessionId: string | null;
}
interface SessionView {
  id: string;
  name: string;
  status: string;
  node: string | null;
}

const SLOT = ['dispatched', 'working', 'auditing'];

describe('Linear dispatches placed across the cluster', { skip: postgresSkip(), timeout: 240_000 }, () => {
  const repos = tempDir('sb-cluster-linear-repos-');
  const elsewhere = tempDir('sb-cluster-linear-elsewhere-');
  let fake: FakeLinear;
  let rig: ClusterRig | undefined;
  const outputs: string[] = [];

  before(async () => {
    fake = await startFakeLinear();
    const repo = replayRepo(join(repos.path, 'repo'));
    replayRepo(join(elsewhere.path, 'st', 'repo'));
    const base = linearDaemonConfig({
      dir: repos.path,
      repo,
      linearUrl: fake.graphqlUrl,
      agentLog: join(repos.path, 'agents.jsonl'),
      originChannel: 'linear',
    });
    const { workspaces: _workspaces, linear, ...rest } = base;
    const linearSection = linear as { pipeline: Record<string, unknown> } & Record<string, unknown>;
    const config = {
      ...rest,
      linear: {
        ...linearSection,
        pipeline: {
          ...linearSection.pipeline,
          maxConcurrent: 2,
          // Issues of team ZZ are in a repository no node holds; those of ST in one only gamma holds.
          teamRepos: { ZZ: join(elsewhere.path, 'nobody', 'repo'), ST: join(elsewhere.path, 'st', 'repo') },
        },
      },
    };
    rig = await startClusterRig(
      'sb-cluster-linear-',
      [
        { name: 'alpha', workspaces: [repos.path] },
        { name: 'beta', workspaces: [repos.path] },
        { name: 'gamma', workspaces: [join(elsewhere.path, 'st')] },
      ],
      { config },
    );
  });

  after(async () => {
    for (const name of rig?.up() ?? []) outputs.push(rig?.node(name).output() ?? '');
    if (process.env.CLUSTER_LINEAR_DUMP) writeFileSync(process.env.CLUSTER_LINEAR_DUMP, outputs.join('\n-----\n'));
    await rig?.stop();
    await fake.close();
    repos.remove();
    elsewhere.remove();
  });

  it('a prompt and a stop from Linear, taken by the intake, reach the worker on the node that runs it, once', async () => {
    if (!rig) throw new Error('no rig');
    const ws = fake.workspace;
    const team = addTeam(ws, 'ST');
    const cluster = rig;
    const holder = await waitFor('the primary held', () => holderOf(cluster, 'primary'));
    // alpha starts first and takes the intake; ST's repository is gamma's only.
    assert.notEqual(holder, 'gamma');
    const intake = rig.node(holder);
    const issue = ws.addIssue({ teamId: team, title: 'Hangs', description: 'Do it. [[hang]]' });
    const { payload, agentSessionId } = agentSessionCreated(ws, issue, 'go');
    assert.equal(await postWebhook(intake.url, payload), 200);
    const worker = await waitFor('the ST-1 worker running on gamma', async () => {
      const all = (await intake.rpc<{ sessions: SessionView[] }>('sessions.list', {})).sessions;
      return all.find((s) => s.name.startsWith('st-1-worker') && s.status === 'running' && s.node === 'gamma');
    });
    // A follow-up prompt reaches the worker on gamma (it keeps running: the message hangs too).
    const prompted = agentSessionPrompted(ws, issue, agentSessionId, 'Also add a farewell. [[hang]]');
    assert.equal(await postWebhook(intake.url, prompted), 200);
    await waitFor('the prompt passed to the worker', () =>
      ws.agentSessions
        .get(agentSessionId)
        ?.activities.some(
          (a) => a.content.type === 'thought' && a.content.body === 'Passed your message to the worker.',
        ),
    );
    assert.equal(await postWebhook(intake.url, agentSessionStop(ws, issue, agentSessionId)), 200);
    await waitFor('the worker killed on gamma', async () => {
      const all = (await intake.rpc<{ sessions: SessionView[] }>('sessions.list', {})).sessions;
      return all.find((s) => s.id === worker.id)?.status === 'killed';
    });
    const dispatches = (await intake.rpc<{ dispatches: DispatchView[] }>('linear.dispatches', { status: 'all' }))
      .dispatches;
    assert.deepEqual(
      dispatches.filter((d) => d.issue === 'ST-1').map((d) => [d.status, d.node]),
      [['stopped', 'gamma']],
    );
    // The response is posted after the kill is stored: wait for it, then check that it came once.
    const responsesOf = () =>
      (ws.agentSessions.get(agentSessionId)?.activities ?? [])
        .map((a) => a.content)
        .filter((c) => c.type === 'response');
    await waitFor('the stop answered on Linear', () => responsesOf().length > 0);
    const responses = responsesOf();
    assert.equal(responses.length, 1);
    assert.match(String(responses[0]?.body), /^Stopped work on ST-1/);
  });

  it('runs each dispatch on a node holding its repository, under the cluster-wide cap, and finishes a lost node’s dispatch elsewhere once', async () => {
    if (!rig) throw new Error('no rig');
    const ws = fake.workspace;
    const team = addTeam(ws, 'OK');
    const nobody = addTeam(ws, 'ZZ');
    // The webhooks go to the intake (the `primary` singleton's holder); gamma answers the listings: it holds no
    // repository, so it never runs a dispatch itself.
    const gamma = rig.node('gamma');
    const cluster = rig;
    const holder = await waitFor('the primary held', () => holderOf(cluster, 'primary'));
    const intake = rig.node(holder);
    const post = async (issue: FakeIssue): Promise<string> => {
      const { payload, agentSessionId } = agentSessionCreated(ws, issue, '@switchboard please do this');
      assert.equal(await postWebhook(intake.url, payload), 200);
      return agentSessionId;
    };
    const list = async (): Promise<DispatchView[]> =>
      (await gamma.rpc<{ dispatches: DispatchView[] }>('linear.dispatches', { status: 'all', limit: 50 })).dispatches;

    // A dispatch no node can run is refused at once, naming why.
    const refusedSession = await post(ws.addIssue({ teamId: nobody, title: 'Elsewhere', description: 'Do it.' }));
    await waitFor('the refusal', () =>
      ws.agentSessions.get(refusedSession)?.activities.some((a) => a.content.type === 'response'),
    );
    const refusal = ws.agentSessions.get(refusedSession)?.activities.map((a) => a.content) ?? [];
    assert.match(String(refusal.at(-1)?.body), /No node of the cluster can run this dispatch/);
    assert.match(String(refusal.at(-1)?.body), /gamma: .* is not in its workspaces/);

    // The first dispatch's worker runs long; two more follow: the cap (2) keeps the third waiting.
    const long = ws.addIssue({ teamId: team, title: 'Long', description: 'Add a greeting. [[sleep:8000]]' });
    const sessions = [await post(long)];
    await waitFor('the long worker running', async () => {
      const all = (await gamma.rpc<{ sessions: SessionView[] }>('sessions.list', {})).sessions;
      return all.some((s) => s.name.startsWith('ok-1-worker') && s.status === 'running');
    });
    for (const title of ['Second', 'Third'])
      sessions.push(await post(ws.addIssue({ teamId: team, title, description: 'Add a line. [[sleep:2000]]' })));
    // The cap holds across the nodes: one of the three waits while two run (on alpha and beta, or both on one).
    await waitFor('one dispatch waiting while two run', async () => {
      const ds = (await list()).filter((d) => d.issue.startsWith('OK'));
      return (
        ds.length === 3 &&
        ds.filter((d) => d.status === 'queued').length === 1 &&
        ds.filter((d) => SLOT.includes(d.status)).length === 2
      );
    });

    let most = 0;
    const watchCap = async (): Promise<boolean> => {
      const ds = (await list()).filter((d) => d.issue.startsWith('OK'));
      most = Math.max(most, ds.filter((d) => SLOT.includes(d.status)).length);
      for (const d of ds) if (d.node) assert.ok(['alpha', 'beta'].includes(d.node), `${d.issue} ran on ${d.node}`);
      return ds.length === 3 && ds.every((d) => d.status === 'done');
    };

    // SIGKILL the node running the long worker, mid-worker.
    const first = (await list()).find((d) => d.issue === 'OK-1');
    const victim = first?.node;
    assert.ok(victim === 'alpha' || victim === 'beta', `OK-1 runs on alpha or beta (is ${victim})`);
    outputs.push(rig.node(victim).output());
    await rig.kill(victim);
    const survivor = victim === 'alpha' ? 'beta' : 'alpha';

    await waitFor('every dispatch done', watchCap, 150_000);
    assert.ok(most <= 2, `at most 2 dispatches held a slot at once (saw ${most})`);
    const done = (await list()).filter((d) => d.issue.startsWith('OK'));
    assert.equal(done.find((d) => d.issue === 'OK-1')?.node, survivor, 'the lost node’s dispatch finished elsewhere');

    // Linear heard one start and one end per agent session, nothing twice.
    await waitFor('every issue Done in Linear', () =>
      [...ws.issues.values()].filter((i) => i.teamId === team).every((i) => ws.states.get(i.stateId)?.name === 'Done'),
    );
    for (const id of sessions) {
      const contents = ws.agentSessions.get(id)?.activities.map((a) => a.content) ?? [];
      assert.equal(contents.filter((c) => c.type === 'thought' && String(c.body).startsWith('Picked up')).length, 1);
      assert.equal(contents.filter((c) => c.type === 'response').length, 1, `one response in ${id}`);
    }
    // OK-1's worker was resumed on the survivor, not doubled.
    const all = (await gamma.rpc<{ sessions: SessionView[] }>('sessions.list', {})).sessions;
    const workers = all.filter((s) => s.name.startsWith('ok-1-worker'));
    assert.deepEqual(
      workers.map((s) => [s.status, s.node]),
      [['completed', survivor]],
    );
    for (const name of rig.up()) outputs.push(rig.node(name).output());
    // The refusal is logged by the router as a failed event (answered in Linear, not retried).
    const refused = /No node of the cluster can run this dispatch/;
    const errors = outputs.flatMap((o) => unexpectedErrors(o).filter((l) => !refused.test(String(l.err ?? ''))));
    assert.deepEqual(errors, [], 'no unexpected error lines');
  });
});
