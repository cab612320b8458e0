// Three real daemon processes share one PostgreSQL database: a node SIGKILLed mid-session is declared down by the
// others, its running session is listed `interrupted` ("node gamma lost") within the node timeout and a few seconds,
// its chat is told exactly once, and the surviving nodes' own sessions are left running.
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
      { name: 'alpha', maxSessions: 2, extra: web },
      { name: 'beta', maxSessions: 2, extra: web },
      { name: 'gamma', maxSessions: 2, extra: web },
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
    });
    const survivor = await alpha.rpc<Summary>('sessions.launch', {
      prompt: 'keep going [[stream:400]]',
      workdir,
      name: 'survivor',
    });
    await waitFor('both running', async () => {
      const { sessions } = await alpha.rpc<{ sessions: Summary[] }>('sessions.list', {});
      return sessions.filter((s) => s.status === 'running').length === 2;
    });
    const listed = await alpha.rpc<{ sessions: Summary[] }>('sessions.list', {});
    assert.deepEqual(listed.sessions.map((s) => [s.name, s.node]).sort(), [
      ['doomed', 'gamma'],
      ['survivor', 'alpha'],
    ]);

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
    assert.ok((await rig.db.selectFrom('outbox_messages').select('id').execute()).length >= beforeCount);
    await alpha.rpc('sessions.kill', { session: survivor.id });
  });
});
