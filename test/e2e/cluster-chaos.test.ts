// The chaos scenario on a cluster: three daemon processes share one PostgreSQL; launches with idempotency keys go to
// random nodes (a client retries a failed or unanswered request on another node with the same key) while random nodes
// are SIGKILLed and started again. Then we count: every launch acknowledged is there exactly once, no launch was run
// twice (the fake agent logs each start), and every session ends (completed, or interrupted by its node's loss).
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pause, seeded } from '../support/cluster-load.ts';
import type { ClusterRig } from '../support/cluster-rig.ts';
import { startClusterRig } from '../support/cluster-rig.ts';
import { postgresSkip } from '../support/postgres.ts';
import { tempDir } from '../support/temp-dir.ts';
import { waitFor } from '../support/wait-for.ts';

const NODES = ['n1', 'n2', 'n3'];
const LAUNCHES = 24;
const KILLS = 4;

interface Listed {
  id: string;
  name: string;
  status: string;
}

describe('chaos on a cluster: SIGKILL random nodes under load', { skip: postgresSkip() }, () => {
  const logDir = tempDir('sb-cluster-chaos-log-');
  const agentLog = join(logDir.path, 'agent-starts.jsonl');
  const seed = Number(process.env.CHAOS_SEED ?? 1337);
  const random = seeded(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  let rig: ClusterRig | undefined;

  before(async () => {
    rig = await startClusterRig(
      'sb-cluster-chaos-',
      NODES.map((name) => ({ name, maxSessions: 4 })),
      { timeoutSec: 2, agentEnv: { FAKE_AGENT_LOG: agentLog } },
    );
  });

  after(async () => {
    await rig?.stop();
    logDir.remove();
  });

  it(`loses nothing and does nothing twice (seed ${seed})`, async () => {
    const cluster = rig as ClusterRig;
    const acknowledged = new Map<string, string>();
    const launchOne = async (key: string): Promise<void> => {
      const workdir = join(cluster.workspace, key);
      mkdirSync(workdir, { recursive: true });
      for (;;) {
        const up = cluster.up();
        if (up.length > 0) {
          try {
            const session = await cluster.node(pick(up)).rpc<{ id: string }>('sessions.launch', {
              prompt: `chaos ${key} [[stream:20]]`,
              workdir,
              name: key,
              multiTurnDisabled: true,
              idempotencyKey: key,
            });
            acknowledged.set(key, session.id);
            return;
          } catch {
            // Refused by a dying node, in progress on another, or at capacity: try again, maybe elsewhere.
          }
        }
        await pause(100 + random() * 200);
      }
    };
    const load = (async () => {
      const inFlight: Promise<void>[] = [];
      for (let i = 0; i < LAUNCHES; i += 1) {
        inFlight.push(launchOne(`chaos-${i}`));
        await pause(150);
      }
      await Promise.all(inFlight);
    })();
    const killer = (async () => {
      for (let round = 0; round < KILLS; round += 1) {
        await pause(700 + random() * 800);
        const victim = pick(cluster.up());
        await cluster.kill(victim);
        await pause(500 + random() * 1_000);
        await cluster.start(victim);
      }
    })();
    await Promise.all([load, killer]);

    const any = cluster.node(NODES[0] as string);
    const listed = await waitFor(
      'every session ended',
      async () => {
        const page = await any.rpc<{ sessions: Listed[] }>('sessions.list', { status: 'all', limit: 500 });
        return page.sessions.every((s) => !['starting', 'running'].includes(s.status)) ? page.sessions : undefined;
      },
      60_000,
    );
    // Every acknowledged launch is there, once, as the session it was answered with; nothing else is.
    assert.equal(acknowledged.size, LAUNCHES);
    assert.deepEqual(listed.map((s) => s.name).sort(), [...acknowledged.keys()].sort());
    for (const session of listed) assert.equal(acknowledged.get(session.name), session.id, session.name);
    // No launch ran twice: the fake agent logged each start with its working directory. A completed session's agent
    // started once; one whose node was lost between storing it and starting its agent never started (and says so).
    const starts = readFileSync(agentLog, 'utf8')
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { cwd: string }).cwd);
    for (const session of listed) {
      const started = starts.filter((cwd) => cwd === join(cluster.workspace, session.name)).length;
      // Each ended as it should: completed, or interrupted because its node was lost.
      if (!['completed', 'interrupted'].includes(session.status)) {
        const detail = await any.rpc<{ error: string | null }>('sessions.get', { session: session.id });
        assert.fail(`${session.name} ended ${session.status}: ${detail.error}`);
      }
      if (session.status === 'completed') assert.equal(started, 1, `${session.name} started once`);
      else assert.ok(started <= 1, `${session.name} started at most once (${started})`);
    }
    assert.ok(
      listed.filter((s) => s.status === 'completed').length >= LAUNCHES / 2,
      'most sessions ran to the end between the kills',
    );
  });
});
