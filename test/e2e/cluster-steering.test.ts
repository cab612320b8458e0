// Two real daemon processes on one PostgreSQL: a session running on beta is steered from alpha through the cluster's
// command queue (a message sent, its pending approval decided, killed, resumed on the node that ran it), and once beta
// is lost, alpha answers at once that it is down.
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
  waitingFor: string | null;
}
interface Output {
  session: Summary;
  lines: string[];
}
interface Approval {
  id: string;
  status: string;
  decidedBy: string | null;
}

describe('steering a session on another node', { skip: postgresSkip() }, () => {
  let rig: ClusterRig | undefined;
  let workdir = '';

  before(async () => {
    rig = await startClusterRig('sb-cluster-steer-', [
      { name: 'alpha', maxSessions: 2 },
      { name: 'beta', maxSessions: 2 },
    ]);
    workdir = join(rig.dir.path, 'work');
    mkdirSync(workdir, { recursive: true });
  });

  after(async () => {
    await rig?.stop();
  });

  /** Waits until beta's output of `session` has a line containing `text`. */
  async function betaSays(session: string, text: string): Promise<void> {
    await waitFor(`${session} to say ${text}`, async () => {
      const out = await rig?.node('beta').rpc<Output>('sessions.output', { session, full: true });
      return out?.lines.some((l) => l.includes(text));
    });
  }

  it('sends, decides an approval, kills and resumes from alpha a session beta runs', async () => {
    if (!rig) throw new Error('no rig');
    const alpha = rig.node('alpha');
    const chat = await alpha.rpc<Summary>('sessions.launch', {
      prompt: 'hello there',
      workdir,
      name: 'chat',
      on: 'beta',
    });
    await waitFor('chat waiting for input', async () => {
      // Its live state (waiting for input) is known on the node that runs it.
      const got = await rig?.node('beta').rpc<Summary>('sessions.get', { session: chat.id });
      return got?.status === 'running' && got.node === 'beta' && got.waitingFor === 'turn-end';
    });
    const sent = await alpha.rpc<{ session: Summary; answeredPermission: boolean }>('sessions.send', {
      session: 'chat',
      message: 'next please',
    });
    assert.deepEqual([sent.session.node, sent.answeredPermission], ['beta', false]);
    await betaSays('chat', 'next please');

    await alpha.rpc('sessions.launch', {
      prompt: 'check the build [[tool]]',
      workdir,
      name: 'asks',
      on: 'beta',
      permissionMode: 'default',
    });
    const pending = await waitFor('the approval pending', async () => {
      const { approvals } = await alpha.rpc<{ approvals: Approval[] }>('approvals.list', { session: 'asks' });
      return approvals[0]?.status === 'pending' ? approvals[0] : undefined;
    });
    const decided = await alpha.rpc<{ outcome: string; approval: Approval }>('approvals.approve', { id: pending.id });
    assert.equal(decided.outcome, 'decided');
    await betaSays('asks', 'tool said: hello-from-tool');

    const killed = await alpha.rpc<Summary>('sessions.kill', { session: 'chat' });
    assert.equal(killed.status, 'killed');
    assert.equal((await rig.node('beta').rpc<Summary>('sessions.get', { session: 'chat' })).status, 'killed');
    const resumed = await alpha.rpc<{ kind: string; session: Summary }>('sessions.resume', {
      session: 'chat',
      prompt: 'carry on',
    });
    assert.deepEqual([resumed.kind, resumed.session.node], ['resumed', 'beta']);
    await betaSays('chat', 'carry on');
    // Nothing is left in the command queue.
    const open = await rig.db
      .selectFrom('cluster_commands')
      .select('status')
      .where('status', 'in', ['queued', 'running'])
      .execute();
    assert.deepEqual(open, []);
  });

  it('answers that the node is down once beta is lost', async () => {
    if (!rig) throw new Error('no rig');
    const alpha = rig.node('alpha');
    await rig.kill('beta');
    await waitFor('beta listed down', async () => {
      const { nodes } = await alpha.rpc<{ nodes: { name: string; status: string }[] }>('nodes.list');
      return nodes.find((n) => n.name === 'beta')?.status === 'down';
    });
    // Before the takeover the session is still running there (the node is down); after it, it is interrupted.
    await assert.rejects(
      alpha.rpc('sessions.send', { session: 'chat', message: 'anyone?' }),
      /node beta is down|chat is interrupted/,
    );
    await waitFor('chat interrupted', async () => {
      const got = await alpha.rpc<Summary>('sessions.get', { session: 'chat' });
      return got.status === 'interrupted';
    });
    await assert.rejects(alpha.rpc('sessions.resume', { session: 'chat' }), /node beta is down: resume --anywhere/);
  });

  it('resume --anywhere continues a lost node’s session elsewhere with its log as context', async () => {
    if (!rig) throw new Error('no rig');
    const alpha = rig.node('alpha');
    const moved = await alpha.rpc<{ kind: string; session: Summary & { prompt: string }; from: string }>(
      'sessions.resume',
      { session: 'chat', anywhere: true, prompt: 'finish the greeting' },
    );
    assert.deepEqual([moved.kind, moved.from, moved.session.node], ['elsewhere', 'chat', 'alpha']);
    assert.match(moved.session.prompt, /continuing the coding session "chat", which ran on node beta/);
    assert.match(moved.session.prompt, /hello there/);
    // Its last output, as beta logged it, read from the database on alpha.
    assert.match(moved.session.prompt, /Its last output was:\n---\n/);
    assert.match(moved.session.prompt, /Now: finish the greeting/);
    const got = await alpha.rpc<Summary & { resumedFrom: string | null }>('sessions.get', {
      session: moved.session.id,
    });
    assert.ok(got.resumedFrom);
    await waitFor('the new session to answer', async () => {
      const out = await alpha.rpc<Output>('sessions.output', { session: moved.session.id, full: true });
      return out.lines.some((l) => l.includes('finish the greeting'));
    });
  });
});
