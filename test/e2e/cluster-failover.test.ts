// Three real daemon processes share one PostgreSQL database: a node SIGKILLed mid-session is declared down by the
// others, its running session is listed `interrupted` ("node gamma lost") within the node timeout and a few seconds,
// its chat is told exactly once, and the surviving nodes' own sessions are left running. The launch it queued starts
// elsewhere exactly once when a slot frees; a launch pinned to it waits until it is back.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ClusterRig } from '../support/cluster-rig.ts';
import { startClusterRig } from '../support/cluster-rig.ts';
import { postgresSkip } from '../support/postgres.ts';
import { waitFor } from '../support/wait-for.ts';

interface Summary {
  id: string;
  name: string;
  status: string;
  node: string | null;
  endReason: string | null;
}

const WEB_CHAT = 'cluster-chat';

describe('a node of the cluster lost mid-session', { skip: postgresSkip() }, () => {
  let rig: ClusterRig | undefined;
  let workdir = '';

  before(async () => {
    const web = { channels: { web: { enabled: true } } };
    rig = await startClusterRig('sb-cluster-failover-', [
      { name: 'alpha', labels: ['linux'], maxSessions: 1, config: web },
      { name: 'beta', labels: ['linux'], maxSessions: 1, config: web },
      { name: 'gamma', maxSessions: 1, config: web },
    ]);
    workdir = join(rig.dir.path, 'work');
    mkdirSync(workdir, { recursive: true });
  });

  after(async () => {
    await rig?.stop();
  });

  it('lists the lost node’s session interrupted on the others and tells its chat once', async () => {
    if (!rig) throw new Error('no rig');
    const gamma = rig.node('gamma');
    const alpha = rig.node('alpha');
    const doomed = await gamma.rpc<Summary>('sessions.launch', {
      prompt: 'write many notes [[stream:400]]',
      workdir,
      name: 'doomed',
      channel: `web|${WEB_CHAT}`,
      on: 'gamma',
    });
    const survivor = await alpha.rpc<Summary>('sessions.launch', {
      prompt: 'keep going [[stream:400]]',
      workdir,
      name: 'survivor',
      on: 'alpha',
    });
    await alpha.rpc<Summary>('sessions.launch', { prompt: '[[hang]] busy', workdir, name: 'busy', on: 'beta' });
    await waitFor('both running', async () => {
      const { sessions } = await alpha.rpc<{ sessions: Summary[] }>('sessions.list', {});
      return sessions.filter((s) => s.status === 'running').length === 3;
    });
    // The cluster is full: gamma queues one launch for any linux node and one pinned to itself.
    const waiting = await gamma.rpc<Summary>('sessions.launch', {
      prompt: '[[hang]] waiting',
      workdir,
      name: 'waiting',
      labels: ['linux'],
    });
    const pinned = await gamma.rpc<Summary>('sessions.launch', { prompt: '[[hang]] pinned', workdir, on: 'gamma' });
    assert.deepEqual([waiting.status, pinned.status], ['queued', 'queued']);
    const listed = await alpha.rpc<{ sessions: Summary[] }>('sessions.list', {});
    assert.deepEqual(
      listed.sessions
        .filter((s) => s.node)
        .map((s) => [s.name, s.node])
        .sort(),
      [
        ['busy', 'beta'],
        ['doomed', 'gamma'],
        ['survivor', 'alpha'],
      ],
    );

    await rig.kill('gamma');
    const interrupted = await waitFor(
      'the lost node’s session listed interrupted',
      async () => {
        const got = await alpha.rpc<Summary>('sessions.get', { session: doomed.id });
        return got.status === 'interrupted' ? got : undefined;
      },
      3_000 + 10_000,
    );
    assert.equal(interrupted.endReason, 'node gamma lost');
    assert.equal(interrupted.node, 'gamma');
    for (const name of ['alpha', 'beta']) {
      const seen: Summary = await rig.node(name).rpc<Summary>('sessions.get', { session: 'doomed' });
      assert.equal(seen.status, 'interrupted');
    }
    assert.equal((await alpha.rpc<Summary>('sessions.get', { session: survivor.id })).status, 'running');

    // The chat's notice is stored once in the shared outbox (keyed per interruption), whichever node took over.
    const notices = await waitFor('the lost-node notice stored', async () => {
      const rows = await rig?.db
        .selectFrom('outbox_messages')
        .select(['text', 'dedupe_key'])
        .where('text', 'like', '%node gamma was lost%')
        .execute();
      return rows && rows.length > 0 ? rows : undefined;
    });
    assert.equal(notices.length, 1);
    assert.match(notices[0]?.text ?? '', /\[doomed\] Interrupted: node gamma was lost/);
    // And it reaches the web chat's transcript once.
    await waitFor('the lost-node notice in the web chat', async () => {
      const rows = await rig?.db
        .selectFrom('web_messages')
        .select('text')
        .where('chat_id', '=', WEB_CHAT)
        .where('text', 'like', '%node gamma was lost%')
        .execute();
      return rows?.length === 1;
    });
    await waitFor('the owed notice cleared', async () => {
      const owed = await rig?.db.selectFrom('restart_notices').selectAll().execute();
      return owed?.length === 0;
    });
    // More heartbeats take nothing over again.
    const beforeCount = (await rig.db.selectFrom('outbox_messages').select('id').execute()).length;
    await waitFor('a few more heartbeats', async () => {
      const { nodes } = await alpha.rpc<{ nodes: { name: string; status: string; lastHeartbeat: number }[] }>(
        'nodes.list',
      );
      return nodes.find((n) => n.name === 'gamma')?.status === 'down';
    });
    const lostNotices = await rig.db
      .selectFrom('outbox_messages')
      .select('id')
      .where('text', 'like', '%node gamma was lost%')
      .execute();
    assert.equal(lostNotices.length, 1);
    const transcript = await rig.db
      .selectFrom('web_messages')
      .select('text')
      .where('chat_id', '=', WEB_CHAT)
      .where('text', 'like', '%node gamma was lost%')
      .execute();
    assert.equal(transcript.length, 1);
    assert.ok((await rig.db.selectFrom('outbox_messages').select('id').execute()).length >= beforeCount);

    // The launch gamma queued is still queued; a slot frees on alpha and it starts there, once.
    assert.equal((await alpha.rpc<Summary>('sessions.get', { session: waiting.id })).status, 'queued');
    await alpha.rpc('sessions.kill', { session: survivor.id });
    const started = await waitFor('the queued launch started elsewhere', async () => {
      const got = await alpha.rpc<Summary>('sessions.get', { session: waiting.id });
      return got.status === 'running' ? got : undefined;
    });
    assert.equal(started.node, 'alpha');
    const runs = await rig.db
      .selectFrom('session_runs')
      .select('session_id')
      .where('session_id', '=', waiting.id)
      .execute();
    assert.equal(runs.length, 1);
    // The launch pinned to gamma waits for it; gamma back, it starts there.
    assert.equal((await alpha.rpc<Summary>('sessions.get', { session: pinned.id })).status, 'queued');
    await rig.start('gamma');
    const back = await waitFor('the pinned launch started on gamma', async () => {
      const got = await alpha.rpc<Summary>('sessions.get', { session: pinned.id });
      return got.status === 'running' ? got : undefined;
    });
    assert.equal(back.node, 'gamma');
  });
});
