// code_run on a cluster of three daemon processes sharing one PostgreSQL: a `code.run` sent to a node runs where the
// cluster places it (a node whose workspaces hold its workdir) and is answered with that node's output; a run no node
// could ever run is refused like any launch; the wall-clock limit is enforced by the node running the turn (it
// answers `timeout`, and still holds when the asking node is SIGKILLed); and when every node that could run it is full
// the run waits in the queue and runs when a slot frees.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ClusterRig } from '../support/cluster-rig.ts';
import { startClusterRig } from '../support/cluster-rig.ts';
import { postgresSkip } from '../support/postgres.ts';
import { tempDir } from '../support/temp-dir.ts';
import { waitFor } from '../support/wait-for.ts';

interface Summary {
  id: string;
  status: string;
  node: string | null;
}

interface RunAnswer {
  success: boolean;
  output: string;
  error?: string;
  detail?: string;
  sessionId: string;
}

describe('code_run placed across a cluster of three', { skip: postgresSkip() }, () => {
  let rig: ClusterRig | undefined;
  const folders = tempDir('sb-cluster-coderun-ws-');
  let left = '';
  let right = '';

  before(async () => {
    // Three folders made before the nodes start (their workspaces must exist): `left` is held by alpha and gamma,
    // `right` by beta only. One slot per node.
    left = join(folders.path, 'left');
    right = join(folders.path, 'right');
    mkdirSync(left, { recursive: true });
    mkdirSync(right, { recursive: true });
    rig = await startClusterRig('sb-cluster-coderun-', [
      { name: 'alpha', maxSessions: 1, workspaces: [left] },
      { name: 'beta', maxSessions: 1, workspaces: [right] },
      { name: 'gamma', maxSessions: 1, workspaces: [left] },
    ]);
  });

  after(async () => {
    await rig?.stop();
    folders.remove();
  });

  function node(name: string) {
    if (!rig) throw new Error('no rig');
    return rig.node(name);
  }

  it('runs on the node holding the workdir and answers with its output', async () => {
    const answer = await node('alpha').rpc<RunAnswer>('code.run', { prompt: 'say hello', workdir: right });
    assert.equal(answer.success, true, JSON.stringify(answer));
    assert.match(answer.output, /FAKE CLAUDE REPLY to: say hello/);
    const session = await node('alpha').rpc<Summary>('sessions.get', { session: answer.sessionId });
    assert.equal(session.node, 'beta');
    assert.equal(session.status, 'completed');
  });

  it('is refused like any launch when no node could ever run it', async () => {
    await assert.rejects(
      node('alpha').rpc('code.run', { prompt: 'x', workdir: '/nowhere/at/all' }),
      /holds \/nowhere\/at\/all in its workspaces/,
    );
  });

  it('answers `timeout` when the wall-clock limit passes on the node running it', async () => {
    const answer = await node('gamma').rpc<RunAnswer>('code.run', {
      prompt: 'think [[hang]]',
      workdir: right,
      timeoutSec: 1,
    });
    assert.equal(answer.success, false);
    assert.equal(answer.error, 'timeout', JSON.stringify(answer));
    assert.match(answer.detail ?? '', /limit 1 s/);
    const session = await node('gamma').rpc<Summary>('sessions.get', { session: answer.sessionId });
    assert.equal(session.node, 'beta');
    assert.equal(session.status, 'killed');
  });

  it('waits in the queue while every node that could run it is full, and runs when a slot frees', async () => {
    // alpha and gamma (the nodes holding `left`) are full; beta cannot run it at all.
    const hogs: Summary[] = [];
    for (const on of ['alpha', 'gamma'])
      hogs.push(
        await node('beta').rpc<Summary>('sessions.launch', { prompt: `[[hang]] hog ${on}`, workdir: left, on }),
      );
    await waitFor('both hogs running', async () => {
      const got = await Promise.all(hogs.map((h) => node('beta').rpc<Summary>('sessions.get', { session: h.id })));
      return got.every((s) => s.status === 'running');
    });
    const run = node('beta').rpc<RunAnswer>('code.run', { prompt: 'queued work', workdir: left });
    const queued = await waitFor('the code_run queued', async () => {
      const rows = await rig?.db
        .selectFrom('coding_sessions')
        .select(['id', 'status', 'node'])
        .where('prompt', '=', 'queued work')
        .execute();
      return rows?.[0]?.status === 'queued' ? rows[0] : undefined;
    });
    assert.equal(queued.node, null);
    const [, gammaHog] = hogs;
    assert.ok(gammaHog);
    await node('alpha').rpc('sessions.kill', { session: gammaHog.id });
    const answer = await run;
    assert.equal(answer.success, true, JSON.stringify(answer));
    assert.match(answer.output, /FAKE CLAUDE REPLY to: queued work/);
    assert.equal(answer.sessionId, queued.id);
    const session = await node('alpha').rpc<Summary>('sessions.get', { session: answer.sessionId });
    assert.equal(session.node, 'gamma');
    const [alphaHog] = hogs;
    if (alphaHog) await node('alpha').rpc('sessions.kill', { session: alphaHog.id });
  });

  it('keeps the limit when the node that asked is SIGKILLed: the node running it kills it', async () => {
    if (!rig) throw new Error('no rig');
    const asked = node('alpha')
      .rpc<RunAnswer>('code.run', { prompt: 'orphan [[hang]]', workdir: right, timeoutSec: 2 })
      .catch((error: unknown) => error);
    const running = await waitFor('the orphan running on beta', async () => {
      const rows = await rig?.db
        .selectFrom('coding_sessions')
        .select(['id', 'status', 'node'])
        .where('prompt', '=', 'orphan [[hang]]')
        .execute();
      return rows?.[0]?.status === 'running' ? rows[0] : undefined;
    });
    assert.equal(running.node, 'beta');
    await rig.kill('alpha');
    assert.ok((await asked) instanceof Error, 'the asking node died before answering');
    const ended = await waitFor('beta to kill the orphan', async () => {
      const row = await rig?.db
        .selectFrom('coding_sessions')
        .select(['status', 'end_reason'])
        .where('id', '=', running.id)
        .executeTakeFirst();
      return row && row.status !== 'running' && row.status !== 'starting' ? row : undefined;
    });
    assert.equal(ended.status, 'killed');
    assert.match(ended.end_reason ?? '', /^code_run watchdog \(total\)/);
  });
});
